/**
 * `deno task chat:register` (issue 43): registers the board with the platforms that need it.
 * Discord: the `/react` command, globally, installable by a server or a person's own account
 * (`integration_types: [0, 1]`) and usable in servers, the bot's DMs and any other DM or group
 * (`contexts: [0, 1, 2]`), through the bulk overwrite of the application's global commands, so
 * running it again changes nothing. Telegram: the bot's webhook, with the secret token and the
 * updates the board answers. Every call has a deadline (REGISTER_TIMEOUT_MS); no token appears in
 * what it reports, even a network error's message naming the address that holds Telegram's
 * (tests/chat_register_test.ts).
 */
import type { Config } from "../../adapters/config.ts";
import { DISCORD_COMMAND, DISCORD_QUERY_OPTION } from "./discord.ts";
import { MAX_CHAT_QUERY_CHARS } from "./search.ts";

/** How long one platform call may take. */
export const REGISTER_TIMEOUT_MS = 10_000;

/** The updates the Telegram webhook answers (services/chat/telegram.ts). */
export const TELEGRAM_UPDATES = ["message", "inline_query", "chosen_inline_result"];

/** The `/react` command as Discord's global commands take it. */
export const DISCORD_COMMAND_DEFINITION = {
  name: DISCORD_COMMAND,
  type: 1,
  description: "Find a reaction image on the board",
  integration_types: [0, 1],
  contexts: [0, 1, 2],
  options: [{
    name: DISCORD_QUERY_OPTION,
    description: "Words on the image, or its tags",
    type: 3,
    required: false,
    autocomplete: true,
    max_length: MAX_CHAT_QUERY_CHARS,
  }],
};

/** What the task was given to work with. */
export type RegisterConfig = Pick<
  Config,
  | "PUBLIC_BASE_URL"
  | "DISCORD_APPLICATION_ID"
  | "DISCORD_BOT_TOKEN"
  | "DISCORD_API_BASE"
  | "TELEGRAM_BOT_TOKEN"
  | "TELEGRAM_WEBHOOK_SECRET"
  | "TELEGRAM_API_BASE"
>;

/** One platform's outcome: a line for the operator. */
export interface RegisterResult {
  platform: "discord" | "telegram";
  ok: boolean;
  message: string;
}

/** `text` with every secret of `config` replaced by `***`. */
function scrub(text: string, config: RegisterConfig): string {
  let out = text;
  for (const secret of [config.DISCORD_BOT_TOKEN, config.TELEGRAM_BOT_TOKEN]) {
    if (secret) out = out.split(secret).join("***");
  }
  return out;
}

/** A failure's message without the request's address (it may hold a token). */
async function failure(res: Response): Promise<string> {
  const body = await res.text().catch(() => "");
  let detail = body.slice(0, 300);
  try {
    const parsed = JSON.parse(body);
    detail = String(parsed.description ?? parsed.message ?? detail);
  } catch {
    // not JSON: the text as it came
  }
  return `HTTP ${res.status}${detail ? `: ${detail}` : ""}`;
}

/**
 * Registers every platform that `config` configures, each call within `timeoutMs`; none
 * configured is an empty list.
 */
export async function registerChat(
  config: RegisterConfig,
  send: typeof fetch = fetch,
  timeoutMs = REGISTER_TIMEOUT_MS,
): Promise<RegisterResult[]> {
  const results: RegisterResult[] = [];
  const call = async (platform: RegisterResult["platform"], run: () => Promise<string>) => {
    try {
      results.push({ platform, ok: true, message: await run() });
    } catch (e) {
      const message = e instanceof DOMException && e.name === "TimeoutError"
        ? `no answer within ${timeoutMs / 1000} s`
        : String((e as Error)?.message ?? e);
      results.push({ platform, ok: false, message: scrub(message, config) });
    }
  };
  if (config.DISCORD_APPLICATION_ID && config.DISCORD_BOT_TOKEN) {
    await call("discord", async () => {
      const url = `${config.DISCORD_API_BASE}/applications/` +
        `${encodeURIComponent(config.DISCORD_APPLICATION_ID!)}/commands`;
      const res = await send(url, {
        method: "PUT",
        headers: {
          "authorization": `Bot ${config.DISCORD_BOT_TOKEN}`,
          "content-type": "application/json",
        },
        body: JSON.stringify([DISCORD_COMMAND_DEFINITION]),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) throw new Error(`Discord refused the command: ${await failure(res)}`);
      await res.body?.cancel();
      return "registered the global /react command (it may take up to an hour to appear)";
    });
  }
  if (config.TELEGRAM_BOT_TOKEN && config.TELEGRAM_WEBHOOK_SECRET && config.PUBLIC_BASE_URL) {
    await call("telegram", async () => {
      const webhook = `${config.PUBLIC_BASE_URL}/api/v1/chat/telegram`;
      const res = await send(
        `${config.TELEGRAM_API_BASE}/bot${config.TELEGRAM_BOT_TOKEN}/setWebhook`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            url: webhook,
            secret_token: config.TELEGRAM_WEBHOOK_SECRET,
            allowed_updates: TELEGRAM_UPDATES,
          }),
          signal: AbortSignal.timeout(timeoutMs),
        },
      );
      if (!res.ok) throw new Error(`Telegram refused the webhook: ${await failure(res)}`);
      const answer = await res.json().catch(() => null);
      if (answer?.ok !== true) throw new Error("Telegram did not confirm the webhook");
      return `set the webhook to ${webhook}`;
    });
  }
  return results;
}
