/**
 * Discord's interactions (issue 43): what the board answers to each interaction Discord posts to
 * `POST /api/v1/chat/discord`, once api/chat.ts has verified its signature. The shapes follow
 * Discord's interaction documentation and are type-checked against `discord-api-types` in
 * tests/chat_discord_test.ts.
 */
import { AppError } from "../../domain/errors.ts";
import { chatLink, shareLinks } from "../../domain/share_links.ts";
import type { ImageDto, ReadModel } from "../../domain/types.ts";
import {
  type ChatSearch,
  clip,
  MAX_CHAT_QUERY_CHARS,
  MAX_CHOICE_CHARS,
  type RecordSend,
} from "./search.ts";

/** The slash command's name and its one option's (`/react query:...`). */
export const DISCORD_COMMAND = "react";
export const DISCORD_QUERY_OPTION = "query";

/** Interaction types (Discord's numbers). */
const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;
const AUTOCOMPLETE = 4;

/** Response types. */
const PONG = 1;
const CHANNEL_MESSAGE = 4;
const UPDATE_MESSAGE = 7;
const AUTOCOMPLETE_RESULT = 8;

/** Message flag: only the caller sees it. */
export const EPHEMERAL = 64;

/** The longest custom_id Discord keeps. */
const MAX_CUSTOM_ID = 100;

/** What an interaction carries that the board reads; everything else is ignored. */
interface Interaction {
  type?: unknown;
  /** Who: `member.user` in a server, `user` elsewhere. */
  member?: { user?: { id?: unknown } };
  user?: { id?: unknown };
  data?: {
    name?: unknown;
    custom_id?: unknown;
    options?: { name?: unknown; value?: unknown; focused?: unknown }[];
  };
}

/** A JSON answer to Discord. */
export type DiscordAnswer = Record<string, unknown>;

/**
 * The custom_id of Next: `next:{position}:{query}`. The query comes last, so a colon in it stays
 * its own; it is cut so that the whole id fits Discord's 100 characters.
 */
export function nextId(position: string, query: string): string {
  const head = `next:${position}:`;
  return head + clip(query, Math.min(MAX_CHAT_QUERY_CHARS, MAX_CUSTOM_ID - head.length));
}

/** The answerer of one board: `origin` is PUBLIC_BASE_URL, where chat clients fetch images. */
export function discordInteractions(
  search: ChatSearch,
  read: ReadModel,
  origin: string,
  sends: RecordSend,
) {
  /** The ephemeral preview of a match: the image, Send, Next and a link to its page. */
  const preview = (image: ImageDto, next: string | null, query: string) => {
    const links = shareLinks(origin, image);
    const caption = clip(image.text ?? "", 256);
    return {
      flags: EPHEMERAL,
      content: "",
      embeds: [{
        ...(caption ? { description: caption } : {}),
        url: links.page,
        // An embed's image is a picture: a video's is its poster; Send posts the video's link.
        image: { url: links.video ? links.preview.url : links.direct },
      }],
      components: [{
        type: 1,
        components: [
          { type: 2, style: 1, label: "Send", custom_id: `send:${image.short_id}` },
          next === null
            ? { type: 2, style: 2, label: "Next", custom_id: "next:end", disabled: true }
            : { type: 2, style: 2, label: "Next", custom_id: nextId(next, query) },
          { type: 2, style: 5, label: "Open page", url: links.page },
        ],
      }],
    };
  };
  const nothing = (query: string, more: boolean) => ({
    flags: EPHEMERAL,
    content: more
      ? "No more reactions match this search."
      : query
      ? `No reaction matches “${clip(query, MAX_CHAT_QUERY_CHARS)}”.`
      : "The board has no images yet.",
    embeds: [],
    components: [],
  });
  const queryOf = (i: Interaction): string => {
    const option = i.data?.options?.find((o) => o.name === DISCORD_QUERY_OPTION);
    return typeof option?.value === "string" ? option.value : "";
  };

  return {
    /** The answer to `interaction` (parsed JSON); 400 `bad_request` for one the board ignores. */
    async answer(interaction: unknown): Promise<DiscordAnswer> {
      const i = (interaction ?? {}) as Interaction;
      switch (i.type) {
        case PING:
          return { type: PONG };
        case APPLICATION_COMMAND: {
          if (i.data?.name !== DISCORD_COMMAND) {
            return {
              type: CHANNEL_MESSAGE,
              data: { flags: EPHEMERAL, content: "This board only knows /react." },
            };
          }
          const query = queryOf(i);
          const match = await search.findMatch(query, null);
          return {
            type: CHANNEL_MESSAGE,
            data: match ? preview(match.image, match.next, query) : nothing(query, false),
          };
        }
        case MESSAGE_COMPONENT: {
          const id = typeof i.data?.custom_id === "string" ? i.data.custom_id : "";
          const send = /^send:([0-9A-Za-z]{8})$/.exec(id);
          if (send) {
            const image = await read.getImage(send[1]);
            if (!image) {
              return {
                type: CHANNEL_MESSAGE,
                data: { flags: EPHEMERAL, content: "That image is no longer on the board." },
              };
            }
            const who = i.member?.user?.id ?? i.user?.id;
            if (typeof who === "string") await sends(image.short_id, `discord:${who}`);
            // The direct link alone: Discord shows the image itself, a GIF stays animated and a
            // video plays; a GIF too large to animate goes as its MP4.
            return {
              type: CHANNEL_MESSAGE,
              data: { content: chatLink(origin, image), allowed_mentions: { parse: [] } },
            };
          }
          const next = /^next:([^:]+):([\s\S]*)$/.exec(id);
          if (next) {
            const match = await search.findMatch(next[2], next[1]);
            return {
              type: UPDATE_MESSAGE,
              data: match ? preview(match.image, match.next, next[2]) : nothing(next[2], true),
            };
          }
          throw new AppError("bad_request", "Unknown button");
        }
        case AUTOCOMPLETE: {
          const choices = await search.suggest(queryOf(i));
          return {
            type: AUTOCOMPLETE_RESULT,
            data: {
              choices: choices.map((c) => ({
                name: clip(c, MAX_CHOICE_CHARS),
                value: clip(c, MAX_CHOICE_CHARS),
              })),
            },
          };
        }
        default:
          throw new AppError("bad_request", "Unsupported interaction type");
      }
    },
  };
}
