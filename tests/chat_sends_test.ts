/**
 * Sends (issue 43): each chat Send, each chosen Telegram result and each copy on the image page by
 * a signed-in person counts once for its image, at most once per person or chat user per image per
 * UTC day, and the image JSON carries `send_count`. An empty chat query answers the most-sent
 * images first, newest among equals. Requests are signed as the platforms sign them (tweetnacl).
 */
import assert from "node:assert/strict";
import nacl from "npm:tweetnacl@1.0.3";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";
import { newMember, signIn } from "./_harness/accounts.ts";

const ORIGIN = "https://reactions.example.com";
const SECRET = "sends-secret";
const keys = nacl.sign.keyPair();
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const svc = await startService({
  env: {
    DISCORD_PUBLIC_KEY: hex(keys.publicKey),
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    PUBLIC_BASE_URL: ORIGIN,
  },
});
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

async function seed(): Promise<ImageDto> {
  const res = await upload(svc.app, auth, await makeImage("png", 8, 8));
  assert.equal(res.status, 201);
  return await res.json();
}

async function sendCount(image: ImageDto): Promise<number> {
  const res = await svc.app.request(`/api/v1/images/${image.short_id}`);
  return (await res.json()).send_count;
}

function discord(body: unknown) {
  const text = JSON.stringify(body);
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = hex(nacl.sign.detached(new TextEncoder().encode(ts + text), keys.secretKey));
  return svc.app.request("/api/v1/chat/discord", {
    method: "POST",
    headers: { "x-signature-ed25519": signature, "x-signature-timestamp": ts },
    body: text,
  });
}

/** Presses Send on `image`: in a server (`member.user`) or in a DM (`user`). */
async function pressSend(image: ImageDto, user: string, inServer = true) {
  const who = inServer ? { member: { user: { id: user } } } : { user: { id: user } };
  const res = await discord({
    type: 3,
    id: "1",
    application_id: "2",
    token: "t",
    ...who,
    data: { custom_id: `send:${image.short_id}`, component_type: 2 },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

function telegram(update: unknown) {
  return svc.app.request("/api/v1/chat/telegram", {
    method: "POST",
    headers: { "x-telegram-bot-api-secret-token": SECRET },
    body: JSON.stringify(update),
  });
}

const chosen = (image: ImageDto, user: number) => ({
  update_id: 9,
  chosen_inline_result: {
    result_id: image.short_id,
    from: { id: user, is_bot: false, first_name: "A" },
    query: "",
  },
});

Deno.test("a Discord Send counts once per user per image per day", async () => {
  const image = await seed();
  assert.equal(await sendCount(image), 0);
  await pressSend(image, "111");
  await pressSend(image, "111", false);
  assert.equal(await sendCount(image), 1, "the same user again, in a DM");
  await pressSend(image, "222");
  assert.equal(await sendCount(image), 2, "another user");
  // The next day (the row moved to yesterday), the first user counts again.
  await svc.db.sql`update image_sends set day = day - 1 where sender = 'discord:111'`;
  await pressSend(image, "111");
  assert.equal(await sendCount(image), 3);
});

Deno.test("a chosen Telegram result counts once per user per day", async () => {
  const image = await seed();
  for (const user of [5, 5, 6]) {
    const res = await telegram(chosen(image, user));
    assert.equal(res.status, 204);
  }
  assert.equal(await sendCount(image), 2);
  // A result that names no image counts nothing, and fails nothing.
  const res = await telegram(chosen({ ...image, short_id: "ZZZZZZZZ" }, 5));
  assert.equal(res.status, 204);
});

Deno.test("a signed-in copy on the image page counts once per person per day", async () => {
  const image = await seed();
  const adminToken = await signIn(svc);
  const member = await newMember(svc, adminToken, "sends_member");
  const post = (token?: string, id = image.short_id) =>
    svc.app.request(`/api/v1/images/${id}/sends`, {
      method: "POST",
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  for (const token of [adminToken, adminToken, member.token]) {
    const res = await post(token);
    assert.equal(res.status, 204);
  }
  assert.equal(await sendCount(image), 2);
  const anonymous = await post();
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  const unknown = await post(adminToken, "ZZZZZZZZ");
  assert.equal(unknown.status, 404);
  assert.deepEqual(await unknown.json(), { detail: "Image not found" });
  assert.equal(await sendCount(image), 2);
});

Deno.test("an empty chat query answers the most-sent images first, newest among equals", async () => {
  await svc.db.sql`update images set send_count = 0`;
  const [a, b, c] = [await seed(), await seed(), await seed()];
  await svc.db.sql`update images set send_count = 5 where short_id = ${a.short_id}`;
  await svc.db.sql`update images set send_count = 9 where short_id = ${b.short_id}`;
  const res = await telegram({
    update_id: 1,
    inline_query: {
      id: "q",
      from: { id: 1, is_bot: false, first_name: "A" },
      query: "",
      offset: "",
    },
  });
  const { results } = await res.json();
  const ids = results.map((r: { id: string }) => r.id);
  assert.deepEqual(ids.slice(0, 3), [b.short_id, a.short_id, c.short_id]);
  // Discord's /react without a query, and its Next, walk the same order.
  const first = await (await discord({
    type: 2,
    id: "1",
    application_id: "2",
    token: "t",
    data: { id: "3", name: "react", type: 1 },
  })).json();
  assert.equal(first.data.embeds[0].image.url, `${ORIGIN}/${b.short_id}.png`);
  const next = first.data.components[0].components[1].custom_id;
  assert.match(next, /^next:m9\.\d+:$/);
  const second = await (await discord({
    type: 3,
    id: "1",
    application_id: "2",
    token: "t",
    data: { custom_id: next, component_type: 2 },
  })).json();
  assert.equal(second.data.embeds[0].image.url, `${ORIGIN}/${a.short_id}.png`);
});
