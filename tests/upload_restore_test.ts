/**
 * The restore fields of `POST /api/v1/images`: `short_id` and `created_at` are honoured when the
 * short ID is free, validated, and another image's short ID answers 409 `short_id_taken`.
 */
import assert from "node:assert/strict";
import { originalKey } from "../domain/storage_keys.ts";
import { readAll } from "../adapters/storage/mod.ts";
import { newShortId } from "../domain/short_id.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, uploadForm } from "./_harness/images.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

function restore(bytes: Uint8Array, fields: Record<string, string>, tags: string[] = []) {
  const form = uploadForm(bytes, tags);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return svc.app.request("/api/v1/images", { method: "POST", headers: auth, body: form });
}

async function imageCount() {
  return (await svc.db.sql`select count(*)::int as n from images`)[0].n as number;
}

Deno.test("a free short_id and a past created_at are kept, and the object lands at that ID", async () => {
  const id = newShortId();
  const bytes = await makeImage("png", 32, 32);
  const res = await restore(bytes, { short_id: id, created_at: "2021-03-04T05:06:07.089Z" }, [
    "restored",
  ]);
  assert.equal(res.status, 201, await res.clone().text());
  const img = await res.json();
  assert.equal(img.short_id, id);
  assert.equal(img.created_at, "2021-03-04T05:06:07.089Z");
  assert.deepEqual(img.tags.map((t: { name: string }) => t.name), ["restored"]);
  assert.deepEqual(await readAll((await svc.s3.store.get(originalKey(id)))!.body), bytes);
  const [row] = await svc.db.sql`select count(*)::int as n from pending_deletes`;
  assert.equal(row.n, 0, "the reservation is cleared by the insert");
  // An offset is read as the instant it names.
  const other = await restore(await makeImage("png", 8, 8), {
    created_at: "2020-01-01T02:00:00+02:00",
  });
  assert.equal(other.status, 201);
  assert.equal((await other.json()).created_at, "2020-01-01T00:00:00.000Z");
});

Deno.test("another image's short_id answers 409 short_id_taken and stores nothing", async () => {
  const id = newShortId();
  const first = await makeImage("png", 16, 16);
  assert.equal((await restore(first, { short_id: id })).status, 201);
  const before = await imageCount();
  const res = await restore(await makeImage("png", 16, 16), { short_id: id });
  assert.equal(res.status, 409);
  const body = await res.json();
  assert.equal(body.code, "short_id_taken");
  assert.match(body.detail, new RegExp(id));
  assert.equal(await imageCount(), before);
  // The first image's original is untouched.
  assert.deepEqual(await readAll((await svc.s3.store.get(originalKey(id)))!.body), first);
  // The same content with its own ID again is the existing image, tags merged.
  const again = await restore(first, { short_id: id }, ["merged"]);
  assert.equal(again.status, 200);
  assert.deepEqual((await again.json()).tags.map((t: { name: string }) => t.name), ["merged"]);
});

Deno.test("existing content with another short_id answers 200 with the existing image", async () => {
  const bytes = await makeImage("png", 12, 12);
  const first = await (await restore(bytes, {})).json();
  const res = await restore(bytes, { short_id: newShortId(), created_at: "2019-01-01T00:00:00Z" });
  assert.equal(res.status, 200);
  const img = await res.json();
  assert.equal(img.short_id, first.short_id);
  assert.equal(img.created_at, first.created_at);
});

Deno.test("malformed short_id and created_at, and a future date, answer 422 in the error shape", async () => {
  const bytes = await makeImage("png", 10, 10);
  const future = new Date(Date.now() + 3_600_000).toISOString();
  const cases: [Record<string, string>, RegExp][] = [
    [{ short_id: "short" }, /^short_id: /],
    [{ short_id: "aZ3kP9q!" }, /^short_id: /],
    [{ created_at: "yesterday" }, /^created_at: must be a date-time/],
    [{ created_at: "2021-02-30T00:00:00Z" }, /^created_at: must be a date-time/],
    [{ created_at: "2021-02-03T00:00:00" }, /^created_at: must be a date-time/],
    [{ created_at: future }, /^created_at: must not be in the future/],
  ];
  const before = await imageCount();
  for (const [fields, detail] of cases) {
    const res = await restore(bytes, fields);
    assert.equal(res.status, 422, JSON.stringify(fields));
    assert.match((await res.json()).detail, detail);
  }
  assert.equal(await imageCount(), before);
});

Deno.test("two uploads racing for one short_id with other content: one 201, one 409", async () => {
  const id = newShortId();
  const [a, b] = [await makeImage("png", 20, 20), await makeImage("png", 20, 20)];
  const statuses = (await Promise.all([restore(a, { short_id: id }), restore(b, { short_id: id })]))
    .map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 409]);
  const [row] = await svc.db.sql`select hash from images where short_id = ${id}`;
  const stored = await readAll((await svc.s3.store.get(originalKey(id)))!.body);
  const { sha256Hex } = await import("../domain/hash.ts");
  assert.equal(sha256Hex(stored), row.hash, "the stored original is the winner's");
});

Deno.test("the OpenAPI document describes short_id, created_at and the 409", async () => {
  const doc = await (await svc.app.request("/openapi.json")).json();
  const post = doc.paths["/images"].post;
  const props = post.requestBody.content["multipart/form-data"].schema.properties;
  assert.ok(props.short_id && props.created_at);
  assert.ok(post.responses["409"]);
});

Deno.test("a short_id longer than 8 characters answers 422 and stores nothing", async () => {
  const bytes = await makeImage("png", 11, 11);
  const before = await imageCount();
  for (const short_id of ["aZ3kP9qXy", `${newShortId()}${newShortId()}`]) {
    const res = await restore(bytes, { short_id });
    assert.equal(res.status, 422, short_id);
    assert.match((await res.json()).detail, /^short_id: /, short_id);
  }
  assert.equal(await imageCount(), before);
});
