/**
 * `deno task chat:register` (issue 43) against fake Discord and Telegram APIs on loopback that
 * record what they get: the global /react command, installable by servers and people and usable in
 * any server or DM, and the webhook with its secret and update types, written as the platforms'
 * typed request bodies (`discord-api-types`, `@grammyjs/types`). Refusals, unreachable and hanging
 * APIs are reported without a token, each call within its deadline.
 */
import assert from "node:assert/strict";
import type { RESTPutAPIApplicationCommandsJSONBody } from "npm:discord-api-types@0.38.57/v10";
import type { ApiMethods } from "npm:@grammyjs/types@5.0.0";
import { loadConfig } from "../adapters/config.ts";
import { registerChat } from "../services/chat/register.ts";

const DISCORD_TOKEN = "discord.bot.token-123";
const TELEGRAM_TOKEN = "123456:telegram-bot-token";
const SECRET = "webhook-secret_9";
const ORIGIN = "https://reactions.example.com";

/** A fake API: records each request; `answer` says what it answers. */
function fakeApi(answer: (path: string) => Response | Promise<Response>) {
  const got: { method: string; path: string; auth: string | null; body: unknown }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    got.push({
      method: req.method,
      path,
      auth: req.headers.get("authorization"),
      body: await req.json().catch(() => null),
    });
    return await answer(path);
  });
  return { got, server, base: `http://127.0.0.1:${server.addr.port}` };
}

const discord = fakeApi(() => Response.json([{ id: "1", name: "react" }]));
const telegram = fakeApi(() => Response.json({ ok: true, result: true }));
const refusing = fakeApi(() =>
  Response.json({ message: "401: Unauthorized", code: 0 }, { status: 401 })
);
const hung = Promise.withResolvers<void>();
const hanging = fakeApi(async () => (await hung.promise, new Response("late")));
Deno.test.afterAll(async () => {
  hung.resolve();
  for (const f of [discord, telegram, refusing, hanging]) await f.server.shutdown();
});

const env = (overrides: Record<string, string> = {}) => ({
  PUBLIC_BASE_URL: ORIGIN,
  DISCORD_APPLICATION_ID: "112233445566778899",
  DISCORD_BOT_TOKEN: DISCORD_TOKEN,
  DISCORD_API_BASE: discord.base,
  TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
  TELEGRAM_WEBHOOK_SECRET: SECRET,
  TELEGRAM_API_BASE: telegram.base,
  ...overrides,
});

const command: RESTPutAPIApplicationCommandsJSONBody = [{
  name: "react",
  type: 1,
  description: "Find a reaction image on the board",
  integration_types: [0, 1],
  contexts: [0, 1, 2],
  options: [{
    name: "query",
    description: "Words on the image, or its tags",
    type: 3,
    required: false,
    autocomplete: true,
    max_length: 60,
  }],
}];
const webhook: Parameters<ApiMethods<string>["setWebhook"]>[0] = {
  url: `${ORIGIN}/api/v1/chat/telegram`,
  secret_token: SECRET,
  allowed_updates: ["message", "inline_query", "chosen_inline_result"],
};

Deno.test("deno task chat:register registers the command and the webhook, and says so", async () => {
  discord.got.length = 0;
  telegram.got.length = 0;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "chat:register"],
    cwd: new URL("../", import.meta.url),
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", ...env() },
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(
    stdout,
    "discord: registered the global /react command (it may take up to an hour to appear)\n" +
      `telegram: set the webhook to ${ORIGIN}/api/v1/chat/telegram\n`,
  );
  assert.deepEqual(discord.got, [{
    method: "PUT",
    path: "/applications/112233445566778899/commands",
    auth: `Bot ${DISCORD_TOKEN}`,
    body: command,
  }]);
  assert.deepEqual(telegram.got, [{
    method: "POST",
    path: `/bot${TELEGRAM_TOKEN}/setWebhook`,
    auth: null,
    body: webhook,
  }]);
  assert.ok(
    !(stdout + stderr).includes(DISCORD_TOKEN) && !(stdout + stderr).includes(TELEGRAM_TOKEN),
  );
});

Deno.test("with nothing configured the task says what to set and exits 1", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "chat:register"],
    cwd: new URL("../", import.meta.url),
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
  }).output();
  assert.equal(out.code, 1);
  assert.match(
    new TextDecoder().decode(out.stderr),
    /Nothing to register: set DISCORD_APPLICATION_ID/,
  );
});

Deno.test("a refusal, an unreachable API and a hanging one are reported without a token", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const unreachable = `http://127.0.0.1:${(closed.addr as Deno.NetAddr).port}`;
  closed.close();
  const refused = await registerChat(
    loadConfig(env({ DISCORD_API_BASE: refusing.base, TELEGRAM_API_BASE: unreachable })),
  );
  assert.deepEqual(refused.map((r) => [r.platform, r.ok]), [["discord", false], [
    "telegram",
    false,
  ]]);
  assert.equal(refused[0].message, "Discord refused the command: HTTP 401: 401: Unauthorized");
  assert.ok(!refused[1].message.includes(TELEGRAM_TOKEN), refused[1].message);

  // Deno's fetch names the address in a network error's message; Telegram's holds the token.
  const failing = (url: string | URL | Request) =>
    Promise.reject(new TypeError(`error sending request for url (${url}): connection reset`));
  const named = await registerChat(loadConfig(env()), failing as typeof fetch);
  assert.deepEqual(named.map((r) => r.message), [
    `error sending request for url (${discord.base}/applications/112233445566778899/commands): ` +
    "connection reset",
    `error sending request for url (${telegram.base}/bot***/setWebhook): connection reset`,
  ]);

  const late = await registerChat(
    loadConfig(env({ DISCORD_API_BASE: hanging.base, TELEGRAM_API_BASE: hanging.base })),
    fetch,
    200,
  );
  assert.deepEqual(late, [
    { platform: "discord", ok: false, message: "no answer within 0.2 s" },
    { platform: "telegram", ok: false, message: "no answer within 0.2 s" },
  ]);
});

Deno.test("the API addresses and IDs are checked at start; tokens are never echoed", () => {
  assert.equal(loadConfig({}).DISCORD_API_BASE, "https://discord.com/api/v10");
  assert.equal(loadConfig({}).TELEGRAM_API_BASE, "https://api.telegram.org");
  assert.equal(
    loadConfig({ DISCORD_API_BASE: "http://127.0.0.1:9/api/" }).DISCORD_API_BASE,
    "http://127.0.0.1:9/api",
  );
  assert.throws(() => loadConfig({ DISCORD_APPLICATION_ID: "abc" }), {
    message:
      'Invalid configuration: DISCORD_APPLICATION_ID: must be the application\'s ID (digits) (got "abc")',
  });
  assert.throws(
    () => loadConfig({ TELEGRAM_API_BASE: "ftp://x", TELEGRAM_BOT_TOKEN: "t0ken" }),
    (e: Error) =>
      e.message.startsWith("Invalid configuration: TELEGRAM_API_BASE: must be an http(s) URL") &&
      !e.message.includes("t0ken"),
  );
});
