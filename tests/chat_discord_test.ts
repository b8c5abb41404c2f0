/**
 * Discord's interactions endpoint (issue 43) on a real service: requests signed the way Discord
 * signs them, with tweetnacl (a library nobody here wrote), answered in the shapes Discord's
 * documentation requires. The expected answers are written as `discord-api-types` values, so the
 * type check holds the oracles to Discord's own definitions, and each answer must equal its
 * oracle. Verification comes first: a bad, missing or stale signature is 401 before the body is
 * read as JSON; an unconfigured board answers 404.
 */
import assert from "node:assert/strict";
import nacl from "npm:tweetnacl@1.0.3";
import type {
  APIApplicationCommandAutocompleteResponse,
  APIInteractionResponseChannelMessageWithSource,
  APIInteractionResponsePong,
  APIInteractionResponseUpdateMessage,
  APIMessageTopLevelComponent,
} from "npm:discord-api-types@0.38.57/v10";
import { loadConfig } from "../adapters/config.ts";
import { MAX_SKEW_SECONDS } from "../domain/chat_signatures.ts";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, uploadCaptioned } from "./_harness/images.ts";

const ORIGIN = "https://reactions.example.com";
const keys = nacl.sign.keyPair();
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

const svc = await startService({
  env: { DISCORD_PUBLIC_KEY: hex(keys.publicKey), PUBLIC_BASE_URL: ORIGIN },
});
const bare = await startService();
Deno.test.afterAll(async () => {
  await svc.close();
  await bare.close();
});
const auth = await authHeader(svc.app);

const now = () => String(Math.floor(Date.now() / 1000));

/** Discord's signature: Ed25519 over the timestamp followed by the raw body, in hex. */
function sign(timestamp: string, body: string): string {
  const message = new TextEncoder().encode(timestamp + body);
  return hex(nacl.sign.detached(message, keys.secretKey));
}

/** POSTs `body` as Discord does, signed unless `headers` say otherwise. */
function post(
  body: unknown,
  opts: { timestamp?: string; headers?: Record<string, string>; app?: typeof svc.app } = {},
) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const timestamp = opts.timestamp ?? now();
  return (opts.app ?? svc.app).request("/api/v1/chat/discord", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-signature-ed25519": sign(timestamp, text),
      "x-signature-timestamp": timestamp,
      ...opts.headers,
    },
    body: text,
  });
}

async function answer(body: unknown) {
  const res = await post(body);
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  return await res.json();
}

/** The interaction fields the board reads (Discord sends many more, which it ignores). */
const command = (query: string) => ({
  type: 2,
  id: "1",
  application_id: "2",
  token: "interaction-token",
  data: { id: "3", name: "react", type: 1, options: [{ name: "query", type: 3, value: query }] },
});
const press = (customId: string) => ({
  type: 3,
  id: "1",
  application_id: "2",
  token: "interaction-token",
  data: { custom_id: customId, component_type: 2 },
});
const typing = (value: string) => ({
  type: 4,
  id: "1",
  application_id: "2",
  token: "interaction-token",
  data: {
    id: "3",
    name: "react",
    type: 1,
    options: [{ name: "query", type: 3, value, focused: true }],
  },
});

/** The Send, Next and page buttons of a preview. */
function buttons(image: ImageDto, next: string | null): APIMessageTopLevelComponent[] {
  return [{
    type: 1,
    components: [
      { type: 2, style: 1, label: "Send", custom_id: `send:${image.short_id}` },
      next === null
        ? { type: 2, style: 2, label: "Next", custom_id: "next:end", disabled: true }
        : { type: 2, style: 2, label: "Next", custom_id: next },
      { type: 2, style: 5, label: "Open page", url: `${ORIGIN}/i/${image.short_id}` },
    ],
  }];
}

/** The ephemeral preview of `image`, as Discord's types define a message response. */
function preview(
  type: 4 | 7,
  image: ImageDto,
  ext: string,
  next: string | null,
): APIInteractionResponseChannelMessageWithSource | APIInteractionResponseUpdateMessage {
  return {
    type,
    data: {
      flags: 64,
      content: "",
      embeds: [{
        description: image.text!,
        url: `${ORIGIN}/i/${image.short_id}`,
        image: { url: `${ORIGIN}/${image.short_id}.${ext}` },
      }],
      components: buttons(image, next),
    },
  };
}

// Newest first among exact matches: `gif` (newer) before `png`.
const png = await uploadCaptioned(svc.app, auth, "this is fine");
const gif = await uploadCaptioned(svc.app, auth, "everything is fine, this is fine", {
  format: "gif",
});
const tagged = await uploadCaptioned(svc.app, auth, "", { tags: ["facepalm_cat"] });

Deno.test("PING answers PONG", async () => {
  const pong: APIInteractionResponsePong = { type: 1 };
  assert.deepEqual(await answer({ type: 1, id: "1", application_id: "2", token: "t" }), pong);
});

Deno.test("/react answers the best match as an ephemeral embed with Send, Next and a page link", async () => {
  const first = await answer(command("this is fine"));
  const next = first.data.components[0].components[1].custom_id as string;
  assert.match(next, /^next:r[A-Za-z0-9+/]+:this is fine$/);
  assert.deepEqual(first, preview(4, gif, "gif", next));

  // Next replaces the preview with the next match (type 7); the last one's Next is disabled.
  const second = await answer(press(next));
  assert.deepEqual(second, preview(7, png, "png", null));
});

Deno.test("Send posts the direct link for everyone, so a GIF plays in the conversation", async () => {
  const sent: APIInteractionResponseChannelMessageWithSource = {
    type: 4,
    data: { content: `${ORIGIN}/${gif.short_id}.gif`, allowed_mentions: { parse: [] } },
  };
  assert.deepEqual(await answer(press(`send:${gif.short_id}`)), sent);
  const gone: APIInteractionResponseChannelMessageWithSource = {
    type: 4,
    data: { flags: 64, content: "That image is no longer on the board." },
  };
  assert.deepEqual(await answer(press("send:ZZZZZZZZ")), gone);
});

Deno.test("a query no caption matches is read as tags; no match at all says so, to the caller only", async () => {
  const res = await answer(command("facepalm cat"));
  assert.equal(res.data.embeds[0].image.url, `${ORIGIN}/${tagged.short_id}.png`);
  assert.deepEqual(res.data.components, buttons(tagged, null));

  const none: APIInteractionResponseChannelMessageWithSource = {
    type: 4,
    data: {
      flags: 64,
      content: "No reaction matches “qwertyuiop zxcvbnm”.",
      embeds: [],
      components: [],
    },
  };
  assert.deepEqual(await answer(command("qwertyuiop zxcvbnm")), none);
  // A position that is no cursor ends the list rather than failing.
  const end: APIInteractionResponseUpdateMessage = {
    type: 7,
    data: {
      flags: 64,
      content: "No more reactions match this search.",
      embeds: [],
      components: [],
    },
  };
  assert.deepEqual(await answer(press("next:r!!:this is fine")), end);
});

Deno.test("autocomplete answers captions and tags that match what was typed", async () => {
  const captions: APIApplicationCommandAutocompleteResponse = {
    type: 8,
    data: {
      choices: [
        { name: "everything is fine, this is fine", value: "everything is fine, this is fine" },
        { name: "this is fine", value: "this is fine" },
      ],
    },
  };
  assert.deepEqual(await answer(typing("this is fi")), captions);
  const tags: APIApplicationCommandAutocompleteResponse = {
    type: 8,
    data: { choices: [{ name: "facepalm cat", value: "facepalm cat" }] },
  };
  assert.deepEqual(await answer(typing("facepalm")), tags);
});

Deno.test("a bad, missing or stale signature is 401 before the body is read as JSON", async () => {
  const refused = { code: "bad_signature", detail: "Missing, invalid or stale request signature" };
  const body = JSON.stringify({ type: 1 });
  const ts = now();
  const flipped = sign(ts, body).replace(/^./, (c) => (c === "0" ? "1" : "0"));
  const cases: [string, Response][] = [
    ["flipped signature", await post(body, { headers: { "x-signature-ed25519": flipped } })],
    ["signed other body", await post(body, { headers: { "x-signature-ed25519": sign(ts, "{}") } })],
    ["no signature", await post(body, { headers: { "x-signature-ed25519": "" } })],
    ["no timestamp", await post(body, { headers: { "x-signature-timestamp": "" } })],
    ["stale", await post(body, { timestamp: String(Number(ts) - MAX_SKEW_SECONDS - 5) })],
    ["future", await post(body, { timestamp: String(Number(ts) + MAX_SKEW_SECONDS + 5) })],
    [
      "not JSON, badly signed",
      await post("{not json", { headers: { "x-signature-ed25519": flipped } }),
    ],
  ];
  for (const [name, res] of cases) {
    assert.equal(res.status, 401, name);
    assert.deepEqual(await res.json(), refused, name);
  }
  // Within the window a signed request passes; signed but not JSON is then 400.
  const recent = await post(body, { timestamp: String(Number(ts) - MAX_SKEW_SECONDS + 5) });
  assert.equal(recent.status, 200);
  await recent.body?.cancel();
  const notJson = await post("{not json");
  assert.equal(notJson.status, 400);
  assert.deepEqual(await notJson.json(), { detail: "The body is not JSON" });
});

Deno.test("no signature or caption reaches the request log", async () => {
  const body = JSON.stringify(command("this is fine"));
  const ts = now();
  const signature = sign(ts, body);
  const before = svc.logs.length;
  const res = await post(body, { timestamp: ts });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const lines = svc.logs.slice(before).join("\n");
  assert.ok(lines.includes("/api/v1/chat/discord"), "the request is logged");
  assert.ok(!lines.includes(signature) && !lines.includes("this is fine"), lines);
});

Deno.test("an unconfigured board answers 404, signed or not", async () => {
  const res = await post({ type: 1 }, { app: bare.app });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), { detail: "Discord is not configured" });
});

Deno.test("start-up stops when Discord is configured without PUBLIC_BASE_URL or with a bad key", () => {
  const base = { DISCORD_PUBLIC_KEY: hex(keys.publicKey) };
  assert.throws(
    () => loadConfig(base),
    {
      message: "Invalid configuration: PUBLIC_BASE_URL: is required when DISCORD_PUBLIC_KEY is " +
        "set: chat clients fetch the images from it",
    },
  );
  assert.throws(
    () => loadConfig({ DISCORD_PUBLIC_KEY: "abc", PUBLIC_BASE_URL: ORIGIN }),
    {
      message: "Invalid configuration: DISCORD_PUBLIC_KEY: must be the application's public key: " +
        '64 hex digits (got "abc")',
    },
  );
  assert.equal(
    loadConfig({ ...base, PUBLIC_BASE_URL: ORIGIN }).DISCORD_PUBLIC_KEY,
    hex(keys.publicKey),
  );
});
