/**
 * Telegram's webhook (issue 43) on a real service: updates carry the secret token the way Telegram
 * sends it, and every answer is the Bot API call Telegram makes for the board, written here as
 * `@grammyjs/types` values (the Bot API's typed definitions) and compared whole. Inline queries
 * page 50 results at a time; a GIF is a `gif` result, a still a `photo` of its JPEG preview with
 * that preview's size. The secret is checked before the body is read; unconfigured is 404.
 */
import assert from "node:assert/strict";
import type {
  ApiMethods,
  InlineQueryResult,
  InlineQueryResultGif,
  InlineQueryResultMpeg4Gif,
  InlineQueryResultPhoto,
  Update,
} from "npm:@grammyjs/types@5.0.0";
import { loadConfig } from "../adapters/config.ts";
import type { ImageDto } from "../domain/types.ts";
import { INLINE_CACHE_SECONDS, TELEGRAM_HELP } from "../services/chat/telegram.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, uploadCaptioned, uploadForm } from "./_harness/images.ts";
import { makeVideo } from "./_harness/videos.ts";

const ORIGIN = "https://reactions.example.com";
const SECRET = "webhook-secret_0123456789";
const svc = await startService({
  env: { TELEGRAM_WEBHOOK_SECRET: SECRET, PUBLIC_BASE_URL: ORIGIN },
});
const bare = await startService();
Deno.test.afterAll(async () => {
  await svc.close();
  await bare.close();
});
const auth = await authHeader(svc.app);

/** The parameters of Bot API method `M`, as Telegram documents them. */
type Call<M extends keyof ApiMethods<string>> =
  & { method: M }
  & Parameters<ApiMethods<string>[M]>[0];

function post(body: unknown, opts: { secret?: string | null; app?: typeof svc.app } = {}) {
  const secret = opts.secret === undefined ? SECRET : opts.secret;
  return (opts.app ?? svc.app).request("/api/v1/chat/telegram", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { "x-telegram-bot-api-secret-token": secret }),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function answer(update: Update) {
  const res = await post(update);
  assert.equal(res.status, 200, await res.clone().text());
  return await res.json();
}

const from = { id: 42, is_bot: false, first_name: "Ada" };
const chat = { id: 42, type: "private" as const, first_name: "Ada" };
const inline = (query: string, offset = ""): Update => ({
  update_id: 1,
  inline_query: { id: "iq-1", from, query, offset },
});
const message = (text: string): Update => ({
  update_id: 2,
  message: { message_id: 7, date: 1, chat, from, text },
});

const api = (image: ImageDto) => `${ORIGIN}/api/v1/images/${image.short_id}`;

const gif = await uploadCaptioned(svc.app, auth, "this is fine", {
  format: "gif",
  width: 320,
  height: 240,
});
const wide = await uploadCaptioned(svc.app, auth, "wide facepalm", { width: 2000, height: 1000 });
const paged: ImageDto[] = [];
for (let i = 0; i < 52; i++) paged.push(await uploadCaptioned(svc.app, auth, `paging crowd ${i}`));

Deno.test("an inline query answers a GIF as a gif result, in the webhook's own response", async () => {
  const result: InlineQueryResultGif = {
    type: "gif",
    id: gif.short_id,
    gif_url: `${ORIGIN}/${gif.short_id}.gif`,
    gif_width: 320,
    gif_height: 240,
    thumbnail_url: `${api(gif)}/thumbnail.jpg`,
    thumbnail_mime_type: "image/jpeg",
  };
  const expected: Call<"answerInlineQuery"> = {
    method: "answerInlineQuery",
    inline_query_id: "iq-1",
    results: [result],
    next_offset: "",
    cache_time: INLINE_CACHE_SECONDS,
  };
  assert.deepEqual(await answer(inline("this is fine")), expected);
});

Deno.test("an MP4 is an mpeg4_gif result and a message's animation: it plays (issue 45)", async () => {
  const form = uploadForm(await makeVideo("mp4_sound", 2), []);
  form.append("text", "moving reaction");
  form.append("text_source", "manual");
  const res = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: auth,
    body: form,
  });
  assert.equal(res.status, 201, await res.clone().text());
  const video: ImageDto = await res.json();
  const result: InlineQueryResultMpeg4Gif = {
    type: "mpeg4_gif",
    id: video.short_id,
    mpeg4_url: `${ORIGIN}/${video.short_id}.mp4`,
    mpeg4_width: 160,
    mpeg4_height: 120,
    mpeg4_duration: 2,
    thumbnail_url: `${api(video)}/thumbnail.jpg`,
    thumbnail_mime_type: "image/jpeg",
  };
  assert.deepEqual((await answer(inline("moving reaction"))).results, [result]);
  const animation: Call<"sendAnimation"> = {
    method: "sendAnimation",
    chat_id: 42,
    animation: `${ORIGIN}/${video.short_id}.mp4`,
    caption: `${ORIGIN}/i/${video.short_id}`,
  };
  assert.deepEqual(await answer(message("@reaction_bot moving reaction")), animation);
});

Deno.test("a still is a photo result of its JPEG preview, with the preview's width and height", async () => {
  const result: InlineQueryResultPhoto = {
    type: "photo",
    id: wide.short_id,
    photo_url: `${api(wide)}/preview.jpg`,
    thumbnail_url: `${api(wide)}/thumbnail.jpg`,
    photo_width: 1280,
    photo_height: 640,
  };
  const res = await answer(inline("wide facepalm"));
  assert.deepEqual(res.results, [result]);
});

Deno.test("inline results come 50 a page; next_offset leads to the rest, then is empty", async () => {
  const first = await answer(inline("paging crowd"));
  assert.equal(first.results.length, 50);
  assert.notEqual(first.next_offset, "");
  assert.ok(first.next_offset.length <= 64, "Telegram's limit on an offset");
  const second = await answer(inline("paging crowd", first.next_offset));
  assert.equal(second.next_offset, "");
  const ids = [...first.results, ...second.results].map((r: InlineQueryResult) => r.id);
  assert.deepEqual(ids.toSorted(), paged.map((i) => i.short_id).toSorted());
  // Newest first.
  assert.equal(ids[0], paged[51].short_id);
});

Deno.test("a message answers the best match: a GIF as an animation, a still as a photo", async () => {
  const animation: Call<"sendAnimation"> = {
    method: "sendAnimation",
    chat_id: 42,
    animation: `${ORIGIN}/${gif.short_id}.gif`,
    caption: `${ORIGIN}/i/${gif.short_id}`,
  };
  assert.deepEqual(await answer(message("@reaction_bot this is fine")), animation);
  const photo: Call<"sendPhoto"> = {
    method: "sendPhoto",
    chat_id: 42,
    photo: `${api(wide)}/preview.jpg`,
    caption: `${ORIGIN}/i/${wide.short_id}`,
  };
  assert.deepEqual(await answer(message("/react wide facepalm")), photo);
  const none: Call<"sendMessage"> = {
    method: "sendMessage",
    chat_id: 42,
    text: "No reaction matches “qwertyuiop zxcvbnm”.",
  };
  assert.deepEqual(await answer(message("qwertyuiop zxcvbnm")), none);
});

Deno.test("in a group the bot answers only a command or a mention", async () => {
  const group = { id: -100, type: "supergroup" as const, title: "friends" };
  const inGroup = (text: string): Update => ({
    update_id: 4,
    message: { message_id: 8, date: 1, chat: group, from, text },
  });
  const chatter = await post(inGroup("this is fine"));
  assert.equal(chatter.status, 204);
  await chatter.body?.cancel();
  const mention = await answer(inGroup("@reaction_bot this is fine"));
  assert.deepEqual([mention.method, mention.chat_id], ["sendAnimation", -100]);
  const command = await answer(inGroup("/react@reaction_bot this is fine"));
  assert.deepEqual([command.method, command.chat_id], ["sendAnimation", -100]);
});

Deno.test("/start answers how to use the bot", async () => {
  const help: Call<"sendMessage"> = { method: "sendMessage", chat_id: 42, text: TELEGRAM_HELP };
  assert.deepEqual(await answer(message("/start")), help);
  assert.match(TELEGRAM_HELP, /@username/);
});

Deno.test("an update with nothing to answer is 204", async () => {
  const res = await post({ update_id: 3, edited_message: { message_id: 1 } });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), "");
});

Deno.test("a missing or wrong secret token is 401 before the body is read as JSON", async () => {
  const refused = { code: "bad_signature", detail: "Missing, invalid or stale request signature" };
  const cases: [string, Response][] = [
    ["missing", await post(inline("this is fine"), { secret: null })],
    ["wrong", await post(inline("this is fine"), { secret: SECRET.slice(0, -1) + "X" })],
    ["longer", await post(inline("this is fine"), { secret: SECRET + "0" })],
    ["not JSON, wrong", await post("{not json", { secret: "nope" })],
  ];
  for (const [name, res] of cases) {
    assert.equal(res.status, 401, name);
    assert.deepEqual(await res.json(), refused, name);
  }
  const notJson = await post("{not json");
  assert.equal(notJson.status, 400);
  assert.deepEqual(await notJson.json(), { detail: "The body is not JSON" });
});

Deno.test("an unconfigured board answers 404; the secret never reaches the log", async () => {
  const res = await post(inline("x"), { app: bare.app });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), { detail: "Telegram is not configured" });
  assert.ok(!svc.logs.join("\n").includes(SECRET));
});

Deno.test("start-up stops when Telegram is configured without PUBLIC_BASE_URL or a valid secret", () => {
  assert.throws(() => loadConfig({ TELEGRAM_WEBHOOK_SECRET: SECRET }), {
    message: "Invalid configuration: PUBLIC_BASE_URL: is required when TELEGRAM_WEBHOOK_SECRET " +
      "is set: chat clients fetch the images from it",
  });
  assert.throws(
    () => loadConfig({ TELEGRAM_WEBHOOK_SECRET: "has space", PUBLIC_BASE_URL: ORIGIN }),
    {
      message: "Invalid configuration: TELEGRAM_WEBHOOK_SECRET: must be 1-256 characters of " +
        "A-Z, a-z, 0-9, _ and - (Telegram's rule)",
    },
  );
});
