/**
 * Telegram's updates (issue 43): what the board answers to each update Telegram posts to its
 * webhook, `POST /api/v1/chat/telegram`, once api/chat.ts has checked the secret token. Every
 * answer is a Bot API call made in the webhook's own response (`{"method": ...}`), so the board
 * makes no outbound request. Shapes follow the Bot API documentation and are type-checked against
 * `@grammyjs/types` in tests/chat_telegram_test.ts.
 */
import { playableMp4, shareLinks } from "../../domain/share_links.ts";
import { PREVIEW_MAX_SIDE, thumbnailSize } from "../../domain/thumbnail_size.ts";
import type { ImageDto } from "../../domain/types.ts";
import { type ChatSearch, clip, MAX_CHAT_QUERY_CHARS, type RecordSend } from "./search.ts";

/** Most results of one inline page (Telegram's limit). */
export const INLINE_PAGE = 50;

/** How long Telegram may keep an inline answer (seconds): new uploads show up soon. */
export const INLINE_CACHE_SECONDS = 60;

/** What `/start` (and `/help`) answers. */
export const TELEGRAM_HELP = "Find a reaction image on the board without leaving the chat:\n" +
  "• in any chat, type my @username followed by a few words of the reaction " +
  "(“@bot this is fine”) and tap a result to send it;\n" +
  "• or send me the words here and I answer with the best match.";

/** What an update carries that the board reads; everything else is ignored. */
interface Update {
  inline_query?: { id?: unknown; query?: unknown; offset?: unknown };
  chosen_inline_result?: { result_id?: unknown; from?: { id?: unknown } };
  message?: { chat?: { id?: unknown; type?: unknown }; text?: unknown };
}

/** A Bot API call made in the webhook's response, or null for nothing to do. */
export type TelegramAnswer = Record<string, unknown> | null;

/**
 * The words of a message to the bot: a leading command (`/react`, `/react@bot`) or mention
 * (`@bot`) dropped.
 */
export function messageQuery(text: string): string {
  return text.replace(/^\s*(\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?|@[A-Za-z0-9_]+)\s*/, "").trim();
}

/** The answerer of one board: `origin` is PUBLIC_BASE_URL, where Telegram fetches the images. */
export function telegramUpdates(search: ChatSearch, origin: string, sends: RecordSend) {
  const api = (image: ImageDto) => `${origin}/api/v1/images/${image.short_id}`;
  /** An inline result: a GIF as itself, a still as its JPEG preview (Telegram wants JPEG). */
  const result = (image: ImageDto) => {
    const thumbnail_url = `${api(image)}/thumbnail.jpg`;
    const mp4 = playableMp4(origin, image);
    if (mp4) {
      // An MP4 plays inline as Telegram's "GIF" (an animation), sound muted: a moving image's
      // rendition once made, or an MP4 upload itself.
      return {
        type: "mpeg4_gif",
        id: image.short_id,
        mpeg4_url: mp4,
        mpeg4_width: image.width,
        mpeg4_height: image.height,
        ...(image.duration_seconds === null
          ? {}
          : { mpeg4_duration: Math.ceil(image.duration_seconds) }),
        thumbnail_url,
        thumbnail_mime_type: "image/jpeg",
      };
    }
    if (image.content_type === "image/gif") {
      return {
        type: "gif",
        id: image.short_id,
        gif_url: shareLinks(origin, image).direct,
        gif_width: image.width,
        gif_height: image.height,
        thumbnail_url,
        thumbnail_mime_type: "image/jpeg",
      };
    }
    const size = thumbnailSize(image.width, image.height, PREVIEW_MAX_SIDE);
    return {
      type: "photo",
      id: image.short_id,
      photo_url: `${api(image)}/preview.jpg`,
      thumbnail_url,
      photo_width: size.width,
      photo_height: size.height,
    };
  };

  return {
    /** The answer to `update` (parsed JSON). */
    async answer(update: unknown): Promise<TelegramAnswer> {
      const u = (update ?? {}) as Update;
      const inline = u.inline_query;
      if (inline && typeof inline.id === "string") {
        const query = typeof inline.query === "string" ? inline.query : "";
        const offset = typeof inline.offset === "string" && inline.offset ? inline.offset : null;
        const { images, next } = await search.findMatches(query, offset, INLINE_PAGE);
        return {
          method: "answerInlineQuery",
          inline_query_id: inline.id,
          results: images.map(result),
          next_offset: next ?? "",
          cache_time: INLINE_CACHE_SECONDS,
        };
      }
      const chosen = u.chosen_inline_result;
      if (chosen) {
        // Sent: inline results are the images' short IDs (inline feedback must be on, docs/chat.md).
        const who = chosen.from?.id;
        if (typeof chosen.result_id === "string" && typeof who === "number") {
          await sends(chosen.result_id, `telegram:${who}`);
        }
        return null;
      }
      const message = u.message;
      const chatId = message?.chat?.id;
      if (
        (typeof chatId === "number" || typeof chatId === "string") &&
        typeof message?.text === "string"
      ) {
        const text = message.text.trim();
        // In a group the bot answers only what is addressed to it (a command or a mention), so
        // that a bot allowed to read every message does not answer every message.
        if (message.chat?.type !== "private" && !/^[/@]/.test(text)) return null;
        if (/^\/(start|help)(@[A-Za-z0-9_]+)?(\s|$)/.test(text)) {
          return { method: "sendMessage", chat_id: chatId, text: TELEGRAM_HELP };
        }
        const query = messageQuery(text);
        const match = await search.findMatch(query, null);
        if (!match) {
          return {
            method: "sendMessage",
            chat_id: chatId,
            text: `No reaction matches “${clip(query, MAX_CHAT_QUERY_CHARS)}”.`,
          };
        }
        const links = shareLinks(origin, match.image);
        // A moving image goes as an animation so that it plays (its MP4 when there is one, a GIF
        // as itself); a still, or a WebM without its MP4 yet (Telegram plays no WebM), as its
        // JPEG preview.
        const mp4 = playableMp4(origin, match.image);
        const animation = mp4 ?? (match.image.content_type === "image/gif" ? links.direct : null);
        return animation
          ? {
            method: "sendAnimation",
            chat_id: chatId,
            animation,
            caption: links.page,
          }
          : {
            method: "sendPhoto",
            chat_id: chatId,
            photo: `${api(match.image)}/preview.jpg`,
            caption: links.page,
          };
      }
      return null;
    },
  };
}
