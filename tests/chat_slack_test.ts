/**
 * Slack's slash command and buttons (issue 43) on a real service: requests signed the way Slack
 * signs them (node:crypto's HMAC, not the board's code), answers written as `@slack/types` blocks
 * and compared whole. A fake Slack on loopback stands in for the presses' response_url and records
 * what it gets: Send posts the image in the channel and deletes the preview, Next replaces it,
 * Cancel deletes it (a Send counts once per person per day); a response_url of another origin is
 * never called. Verification comes first:
 * a bad, missing or stale signature is 401; an unconfigured board answers 404.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { ActionsBlock, Button, ImageBlock } from "npm:@slack/types@3.2.0";
import { loadConfig } from "../adapters/config.ts";
import { MAX_SKEW_SECONDS } from "../domain/chat_signatures.ts";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, uploadCaptioned } from "./_harness/images.ts";

const ORIGIN = "https://reactions.example.com";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

/** A fake Slack: records every POST to a response_url; `status` is what it answers. */
const received: { path: string; body: unknown }[] = [];
let status = 200;
const fake = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  received.push({ path: new URL(req.url).pathname, body: await req.json() });
  return new Response("ok", { status });
});
const SLACK = `http://127.0.0.1:${fake.addr.port}`;
// Another loopback server that must never be called: its origin is not configured.
const foreignCalls: string[] = [];
const foreign = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
  foreignCalls.push(req.url);
  return new Response("ok");
});
const FOREIGN = `http://127.0.0.1:${foreign.addr.port}`;
// A configured Slack that never answers, until the test ends.
const hung = Promise.withResolvers<void>();
const hanging = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
  await hung.promise;
  return new Response("late");
});
const HANGING = `http://127.0.0.1:${hanging.addr.port}`;

const svc = await startService({
  env: {
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_RESPONSE_ORIGINS: `${SLACK},${HANGING}`,
    PUBLIC_BASE_URL: ORIGIN,
  },
});
const bare = await startService();
Deno.test.afterAll(async () => {
  await svc.close();
  await bare.close();
  await fake.shutdown();
  await foreign.shutdown();
  hung.resolve();
  await hanging.shutdown();
});
const auth = await authHeader(svc.app);

const now = () => String(Math.floor(Date.now() / 1000));

/** Slack's signature: `v0=` and the hex HMAC-SHA256 of `v0:{timestamp}:{body}`. */
const sign = (timestamp: string, body: string) =>
  "v0=" + createHmac("sha256", SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest("hex");

function post(
  path: string,
  form: Record<string, string>,
  opts: { timestamp?: string; headers?: Record<string, string>; app?: typeof svc.app } = {},
) {
  const body = new URLSearchParams(form).toString();
  const timestamp = opts.timestamp ?? now();
  return (opts.app ?? svc.app).request(`/api/v1/chat/${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-signature": sign(timestamp, body),
      "x-slack-request-timestamp": timestamp,
      ...opts.headers,
    },
    body,
  });
}

/** The fields of a slash command the board reads, with some Slack always sends. */
const command = (text: string) => ({
  command: "/react",
  text,
  team_id: "T1",
  channel_id: "C1",
  user_id: "U1",
  response_url: `${SLACK}/commands/T1/1/abc`,
  trigger_id: "1.2.3",
});

async function slash(text: string) {
  const res = await post("slack", command(text));
  assert.equal(res.status, 200, await res.clone().text());
  return await res.json();
}

/** Presses `actionId` with `value`; the response_url is on the fake Slack unless given. */
async function press(actionId: string, value: string, responseUrl = `${SLACK}/actions/T1/1/xyz`) {
  const payload = {
    type: "block_actions",
    user: { id: "U1" },
    team: { id: "T1" },
    response_url: responseUrl,
    actions: [{ type: "button", action_id: actionId, block_id: "b", value, action_ts: "1" }],
  };
  return await post("slack/actions", { payload: JSON.stringify(payload) });
}

const image = (i: ImageDto, ext: string, alt: string): ImageBlock => ({
  type: "image",
  image_url: `${ORIGIN}/${i.short_id}.${ext}`,
  alt_text: alt,
});

function buttons(i: ImageDto, next: string | null): ActionsBlock {
  const elements: Button[] = [{
    type: "button",
    action_id: "send",
    text: { type: "plain_text", text: "Send" },
    value: i.short_id,
    style: "primary",
  }];
  if (next !== null) {
    elements.push({
      type: "button",
      action_id: "next",
      text: { type: "plain_text", text: "Next" },
      value: next,
    });
  }
  elements.push({
    type: "button",
    action_id: "cancel",
    text: { type: "plain_text", text: "Cancel" },
    value: "cancel",
  });
  return { type: "actions", elements };
}

// Newest first among exact matches: `gif` (newer) before `png`.
const png = await uploadCaptioned(svc.app, auth, "this is fine");
const gif = await uploadCaptioned(svc.app, auth, "everything is fine, this is fine", {
  format: "gif",
});
const tagged = await uploadCaptioned(svc.app, auth, "", { tags: ["facepalm_cat", "sigh"] });

Deno.test("/react answers an ephemeral image of the best match with Send, Next and Cancel", async () => {
  const first = await slash("this is fine");
  const next = first.blocks[1].elements[1].value as string;
  assert.match(next, /^r[A-Za-z0-9+/]+:this is fine$/);
  assert.deepEqual(first, {
    response_type: "ephemeral",
    text: `${ORIGIN}/i/${gif.short_id}`,
    blocks: [image(gif, "gif", "everything is fine, this is fine"), buttons(gif, next)],
  });
  // An image without a caption is described by its tags.
  const byTags = await slash("facepalm cat");
  assert.deepEqual(byTags.blocks[0], image(tagged, "png", "facepalm_cat, sigh"));
});

Deno.test("Next replaces the preview through the response_url; the last has no Next", async () => {
  const first = await slash("this is fine");
  received.length = 0;
  const res = await press("next", first.blocks[1].elements[1].value);
  assert.equal(res.status, 200);
  assert.deepEqual(received, [{
    path: "/actions/T1/1/xyz",
    body: {
      response_type: "ephemeral",
      text: `${ORIGIN}/i/${png.short_id}`,
      blocks: [image(png, "png", "this is fine"), buttons(png, null)],
      replace_original: true,
    },
  }]);
});

Deno.test("Send posts the image in the channel and deletes the preview; Cancel deletes it", async () => {
  received.length = 0;
  assert.equal((await press("send", gif.short_id)).status, 200);
  assert.deepEqual(received.map((r) => r.body), [
    {
      response_type: "in_channel",
      replace_original: false,
      text: `${ORIGIN}/i/${gif.short_id}`,
      blocks: [image(gif, "gif", "everything is fine, this is fine")],
    },
    { delete_original: true },
  ]);
  received.length = 0;
  assert.equal((await press("cancel", "cancel")).status, 200);
  assert.deepEqual(received.map((r) => r.body), [{ delete_original: true }]);
  // The Send counted once; a second Send by the same person today posts but does not count.
  const count = async () =>
    (await (await svc.app.request(`/api/v1/images/${gif.short_id}`)).json()).send_count;
  assert.equal(await count(), 1);
  assert.equal((await press("send", gif.short_id)).status, 200);
  assert.equal(await count(), 1);
});

Deno.test("a response_url of another origin is never called", async () => {
  received.length = 0;
  for (const url of [`${FOREIGN}/actions/x`, "https://hooks.slack.com.evil.example/x", "nope"]) {
    const res = await press("send", gif.short_id, url);
    assert.equal(res.status, 400, url);
    assert.deepEqual(await res.json(), {
      detail: "response_url is not one of SLACK_RESPONSE_ORIGINS",
    });
  }
  assert.deepEqual(foreignCalls, []);
  assert.deepEqual(received, []);
});

Deno.test("a failing response_url is logged without its address; the press still answers", async () => {
  status = 500;
  const before = svc.logs.length;
  try {
    const res = await press("cancel", "cancel");
    assert.equal(res.status, 200);
  } finally {
    status = 200;
  }
  const lines = svc.logs.slice(before).map((l) => JSON.parse(l));
  const warned = lines.find((l) => l.msg === "slack response_url call failed");
  assert.equal(warned?.err, "response_url answered 500");
  assert.ok(!svc.logs.slice(before).join("\n").includes("/actions/T1"), "no response_url logged");
});

Deno.test("a response_url that never answers is given up on: the press answers", async () => {
  const before = svc.logs.length;
  const res = await press("cancel", "cancel", `${HANGING}/actions/T1/1/xyz`);
  assert.equal(res.status, 200);
  const lines = svc.logs.slice(before).map((l) => JSON.parse(l));
  const warned = lines.find((l) => l.msg === "slack response_url call failed");
  assert.equal(warned?.err, "TimeoutError");
  assert.ok(!svc.logs.slice(before).join("\n").includes(HANGING), "no response_url logged");
});

Deno.test("no match says so, to the caller only", async () => {
  assert.deepEqual(await slash("qwertyuiop zxcvbnm"), {
    response_type: "ephemeral",
    text: "No reaction matches “qwertyuiop zxcvbnm”.",
  });
});

Deno.test("a bad, missing or stale signature is 401 before the form is read", async () => {
  const refused = { code: "bad_signature", detail: "Missing, invalid or stale request signature" };
  const ts = now();
  const old = String(Number(ts) - MAX_SKEW_SECONDS - 5);
  const cases: [string, Response][] = [
    [
      "wrong secret",
      await post("slack", command("x"), {
        headers: { "x-slack-signature": "v0=" + "0".repeat(64) },
      }),
    ],
    ["no signature", await post("slack", command("x"), { headers: { "x-slack-signature": "" } })],
    [
      "no timestamp",
      await post("slack", command("x"), { headers: { "x-slack-request-timestamp": "" } }),
    ],
    ["stale", await post("slack", command("x"), { timestamp: old })],
    ["stale press", await post("slack/actions", { payload: "{}" }, { timestamp: old })],
  ];
  for (const [name, res] of cases) {
    assert.equal(res.status, 401, name);
    assert.deepEqual(await res.json(), refused, name);
  }
  // The signature covers the body: the same headers over another body are refused.
  const body = new URLSearchParams(command("this is fine")).toString();
  const res = await svc.app.request("/api/v1/chat/slack", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-signature": sign(ts, body),
      "x-slack-request-timestamp": ts,
    },
    body: body + "&text=tampered",
  });
  assert.equal(res.status, 401);
  await res.body?.cancel();
});

Deno.test("an unconfigured board answers 404 to both routes", async () => {
  for (const path of ["slack", "slack/actions"]) {
    const res = await post(path, command("x"), { app: bare.app });
    assert.equal(res.status, 404, path);
    assert.deepEqual(await res.json(), { detail: "Slack is not configured" });
  }
});

Deno.test("start-up stops when Slack is configured without PUBLIC_BASE_URL; origins are parsed", () => {
  assert.throws(() => loadConfig({ SLACK_SIGNING_SECRET: "s" }), {
    message: "Invalid configuration: PUBLIC_BASE_URL: is required when SLACK_SIGNING_SECRET is " +
      "set: chat clients fetch the images from it",
  });
  assert.deepEqual(loadConfig({}).SLACK_RESPONSE_ORIGINS, ["https://hooks.slack.com"]);
  assert.deepEqual(
    loadConfig({ SLACK_RESPONSE_ORIGINS: "https://hooks.slack.com, http://127.0.0.1:9" })
      .SLACK_RESPONSE_ORIGINS,
    ["https://hooks.slack.com", "http://127.0.0.1:9"],
  );
  assert.throws(() => loadConfig({ SLACK_RESPONSE_ORIGINS: "https://hooks.slack.com/x" }), {
    message: /^Invalid configuration: SLACK_RESPONSE_ORIGINS: https:\/\/hooks.slack.com\/x: /,
  });
});
