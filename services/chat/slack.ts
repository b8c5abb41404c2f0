/**
 * Slack's slash command and its buttons (issue 43), once api/chat.ts has verified the request's
 * signature. `/react <query>` is answered in the response, an ephemeral preview (an image block
 * and the buttons Send, Next and Cancel); a button press is carried out through the press's
 * `response_url`, which is called only when its origin is one of SLACK_RESPONSE_ORIGINS and with
 * a deadline of RESPONSE_URL_TIMEOUT_MS for all its calls (tests/chat_slack_test.ts). Shapes
 * follow Slack's Block Kit documentation and are type-checked against `@slack/types` in the tests.
 */
import type { Logger } from "../../adapters/log.ts";
import { AppError } from "../../domain/errors.ts";
import { altText, isVideoType, shareLinks } from "../../domain/share_links.ts";
import type { ImageDto, ReadModel } from "../../domain/types.ts";
import { type ChatSearch, clip, MAX_CHAT_QUERY_CHARS, type RecordSend } from "./search.ts";

/** How long all the calls of one button press to its response_url may take together. */
export const RESPONSE_URL_TIMEOUT_MS = 2_000;

/** A Slack message (the slash command's answer, or what a response_url is sent). */
export type SlackMessage = Record<string, unknown>;

/** A response_url that answered with an error status. */
class ResponseUrlRefused extends Error {
  override name = "ResponseUrlRefused";
}

/** What a button press carries that the board reads. */
interface ActionPayload {
  type?: unknown;
  user?: { id?: unknown; team_id?: unknown };
  team?: { id?: unknown } | null;
  response_url?: unknown;
  actions?: { action_id?: unknown; value?: unknown }[];
}

/** The image block of `image`: its direct link, described by its caption or its tags. */
function imageBlock(origin: string, image: ImageDto) {
  const alt = clip(image.text || altText(image), 2000);
  // Slack's image blocks take pictures only: a video shows as its poster's JPEG preview.
  const url = isVideoType(image.content_type)
    ? `${origin}/api/v1/images/${image.short_id}/preview.jpg`
    : shareLinks(origin, image).direct;
  return { type: "image", image_url: url, alt_text: alt };
}

/** The answerer of one board: `origin` is PUBLIC_BASE_URL, where Slack fetches the images. */
export function slackCommands(
  search: ChatSearch,
  read: ReadModel,
  origin: string,
  opts: { responseOrigins: string[]; sends: RecordSend; fetch?: typeof fetch },
) {
  const send = opts.fetch ?? fetch;
  const preview = (image: ImageDto, next: string | null, query: string): SlackMessage => {
    const buttons: Record<string, unknown>[] = [
      {
        type: "button",
        action_id: "send",
        text: { type: "plain_text", text: "Send" },
        value: image.short_id,
        style: "primary",
      },
    ];
    if (next !== null) {
      buttons.push({
        type: "button",
        action_id: "next",
        text: { type: "plain_text", text: "Next" },
        value: `${next}:${clip(query, MAX_CHAT_QUERY_CHARS)}`,
      });
    }
    buttons.push({
      type: "button",
      action_id: "cancel",
      text: { type: "plain_text", text: "Cancel" },
      value: "cancel",
    });
    return {
      response_type: "ephemeral",
      text: shareLinks(origin, image).page,
      blocks: [imageBlock(origin, image), { type: "actions", elements: buttons }],
    };
  };
  const nothing = (query: string, more: boolean): SlackMessage => ({
    response_type: "ephemeral",
    text: more
      ? "No more reactions match this search."
      : query
      ? `No reaction matches “${clip(query, MAX_CHAT_QUERY_CHARS)}”.`
      : "The board has no images yet.",
  });

  /** POSTs `messages` in turn to `url`, all within RESPONSE_URL_TIMEOUT_MS. */
  const respond = async (url: string, messages: SlackMessage[]) => {
    const signal = AbortSignal.timeout(RESPONSE_URL_TIMEOUT_MS);
    for (const message of messages) {
      const res = await send(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(message),
        signal,
        redirect: "error",
      });
      await res.body?.cancel();
      if (!res.ok) throw new ResponseUrlRefused(`response_url answered ${res.status}`);
    }
  };

  return {
    /** The answer to `/react <text>`. */
    async command(text: string): Promise<SlackMessage> {
      const query = text.trim();
      const match = await search.findMatch(query, null);
      return match ? preview(match.image, match.next, query) : nothing(query, false);
    },

    /**
     * Carries out a button press (`payload`, parsed). A response_url of any other origin than
     * SLACK_RESPONSE_ORIGINS' is refused (400) and never called. A failed call is logged (without
     * the URL, which lets its holder post) and the press answered all the same: Slack shows
     * nothing for it, and the person can press again.
     */
    async action(payload: unknown, log?: Logger): Promise<void> {
      const p = (payload ?? {}) as ActionPayload;
      const action = p.actions?.[0];
      const id = typeof action?.action_id === "string" ? action.action_id : "";
      const value = typeof action?.value === "string" ? action.value : "";
      const url = typeof p.response_url === "string" ? p.response_url : "";
      if (p.type !== "block_actions" || !action) {
        throw new AppError("bad_request", "Not a button press");
      }
      let target: string | null = null;
      try {
        target = new URL(url).origin;
      } catch {
        target = null;
      }
      if (!target || !opts.responseOrigins.includes(target)) {
        throw new AppError("bad_request", "response_url is not one of SLACK_RESPONSE_ORIGINS");
      }
      let messages: SlackMessage[];
      if (id === "send") {
        const image = /^[0-9A-Za-z]{8}$/.test(value) ? await read.getImage(value) : null;
        messages = image
          ? [
            {
              response_type: "in_channel",
              replace_original: false,
              text: shareLinks(origin, image).page,
              blocks: [imageBlock(origin, image)],
            },
            { delete_original: true },
          ]
          : [{ replace_original: true, text: "That image is no longer on the board." }];
      } else if (id === "next") {
        const m = /^([^:]+):([\s\S]*)$/.exec(value);
        const match = m ? await search.findMatch(m[2], m[1]) : null;
        const answer = match ? preview(match.image, match.next, m![2]) : nothing("", true);
        messages = [{ ...answer, replace_original: true }];
      } else if (id === "cancel") {
        messages = [{ delete_original: true }];
      } else {
        throw new AppError("bad_request", "Unknown button");
      }
      try {
        await respond(url, messages);
        const user = p.user?.id;
        const team = p.team?.id ?? p.user?.team_id ?? "";
        if (id === "send" && typeof user === "string") {
          // Counted once the image is in the conversation.
          await opts.sends(value, `slack:${team}:${user}`);
        }
      } catch (err) {
        // Our own message for an HTTP failure; for others only the error's name: a network
        // error's message names the URL.
        const reason = err instanceof ResponseUrlRefused ? err.message : (err as Error)?.name;
        log?.warn("slack response_url call failed", { action: id, err: reason ?? "Error" });
      }
    },
  };
}
