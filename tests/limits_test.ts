/**
 * Every body and collection the API takes is capped (issue 16): JSON and form bodies at 64 KiB
 * (413 `body_too_large`, before they are read), and an image's tags at 50 however they are added
 * (422 `too_many_tags`, nothing changed).
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { MAX_BODY_BYTES } from "../api/body_limit.ts";
import { MAX_TAGS_PER_IMAGE } from "../domain/tag_names.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, randomTag, upload } from "./_harness/images.ts";
import { apiRoutes } from "./_harness/routes.ts";
import { tagCountDrift } from "./_harness/consistency.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

/** A body stream of `chunk`-byte pieces that never ends; `pulled()` says how many were read. */
function endless(chunk = 1024) {
  let pulls = 0;
  const piece = new TextEncoder().encode(`{"tags":["${"x".repeat(chunk)}`).subarray(0, chunk);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(piece.slice());
    },
  });
  return { body, pulled: () => pulls };
}

async function assert413(res: Response, what: string) {
  assert.equal(res.status, 413, what);
  assert.deepEqual(await res.json(), {
    code: "body_too_large",
    detail: `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes`,
    max_bytes: MAX_BODY_BYTES,
  }, what);
}

/** The routes that take an image file, held to the image size limit instead (their own tests). */
const FILE_ROUTES = ["POST /images", "POST /images/search-by-image"];

Deno.test("every route but the two that take a file refuses a body over 64 KiB with 413", async () => {
  const routes = apiRoutes(svc.services).filter((r) =>
    !["GET", "HEAD"].includes(r.method) && !FILE_ROUTES.includes(r.key)
  );
  for (const expected of ["POST /auth/token", "PATCH /images/:id/tags", "DELETE /images/:id"]) {
    assert.ok(routes.some((r) => r.key === expected), expected);
  }
  const big = JSON.stringify({ tags: ["a".repeat(MAX_BODY_BYTES)] });
  for (const route of routes) {
    // Declared: refused from its Content-Length alone, whatever the token.
    const declared = await svc.app.request(route.url, {
      method: route.method,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
      body: big,
    });
    await assert413(declared, `${route.key} declared`);
    // Streamed without a length: cut off once it passes the cap, never read to its end.
    const stream = endless();
    const streamed = await svc.app.request(route.url, {
      method: route.method,
      headers: { "content-type": "application/json", ...auth },
      body: stream.body,
    });
    await assert413(streamed, `${route.key} streamed`);
    assert.ok(stream.pulled() <= MAX_BODY_BYTES / 1024 + 4, `${route.key}: ${stream.pulled()} KiB`);
  }
  // At the cap a body is read as usual (here: refused for its content, not its size).
  const atCap = JSON.stringify({ tags: ["x"] }).padEnd(MAX_BODY_BYTES, " ");
  const res = await svc.app.request("/api/v1/images/AbCdEfGh/tags", {
    method: "PATCH",
    headers: { "content-type": "application/json", ...auth },
    body: atCap,
  });
  assert.equal(res.status, 404);
  await res.body?.cancel();
});

Deno.test("an upload is not held to the JSON cap", async () => {
  const noise = new Uint8Array(300 * 300 * 3).map(() => Math.random() * 256);
  const png = new Uint8Array(
    await sharp(noise, { raw: { width: 300, height: 300, channels: 3 } }).png().toBuffer(),
  ); // random pixels: well over 64 KiB
  assert.ok(png.length > MAX_BODY_BYTES, `${png.length} bytes`);
  const res = await upload(svc.app, auth, png);
  assert.equal(res.status, 201);
  await res.body?.cancel();
});

const tags = (n: number, prefix = randomTag("t")) =>
  Array.from({ length: n }, (_, i) => `${prefix}_${i}`);

async function newImage(initial: string[] = []) {
  const res = await upload(svc.app, auth, await makeImage("png", 8, 8), initial);
  assert.equal(res.status, 201);
  return (await res.json()).short_id as string;
}

function patchTags(id: string, body: unknown) {
  return svc.app.request(`/api/v1/images/${id}/tags`, {
    method: "PATCH",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify(body),
  });
}

async function tagsOf(id: string): Promise<string[]> {
  const res = await svc.app.request(`/api/v1/images/${id}`);
  return (await res.json()).tags.map((t: { name: string }) => t.name).sort();
}

async function assert422(res: Response, what: string) {
  assert.equal(res.status, 422, what);
  const body = await res.json();
  assert.equal(body.code, "too_many_tags", what);
  assert.equal(body.max_tags, MAX_TAGS_PER_IMAGE, what);
  assert.equal(typeof body.detail, "string", what);
}

Deno.test("tag edits that would pass 50 tags on the image answer 422 and change nothing", async () => {
  const id = await newImage(tags(40));
  const before = await tagsOf(id);
  await assert422(await patchTags(id, { add: tags(11) }), "40 + 11");
  assert.deepEqual(await tagsOf(id), before);
  const ten = tags(10);
  const ok = await patchTags(id, { add: ten, remove: [] });
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).tags.length, 50);
  await assert422(await patchTags(id, { add: tags(1) }), "50 + 1");
  // Removing one makes room for one, in the same edit.
  const swap = await patchTags(id, { add: tags(1), remove: [ten[0]] });
  assert.equal(swap.status, 200);
  assert.equal((await swap.json()).tags.length, 50);
  // A replacement is bounded by the request's own cap.
  await assert422(await patchTags(id, { tags: tags(51) }), "replace with 51");
  assert.equal((await tagsOf(id)).length, 50);
  assert.deepEqual(await tagsOfCounts(), []);
});

Deno.test("a re-upload whose tags would pass 50 answers 422 and changes nothing", async () => {
  const png = await makeImage("png", 8, 8);
  const first = await upload(svc.app, auth, png, tags(30));
  assert.equal(first.status, 201);
  const { short_id: id } = await first.json();
  const before = await tagsOf(id);
  await assert422(await upload(svc.app, auth, png, tags(21)), "30 + 21 by re-upload");
  assert.deepEqual(await tagsOf(id), before);
  const again = await upload(svc.app, auth, png, tags(20));
  assert.equal(again.status, 200);
  assert.equal((await again.json()).tags.length, 50);
  await assert422(await upload(svc.app, auth, png, [...tags(51)]), "51 in one request");
});

Deno.test("concurrent adds cannot pass 50 between them", async () => {
  const id = await newImage();
  const results = await Promise.all(
    Array.from({ length: 6 }, () => patchTags(id, { add: tags(20) })),
  );
  const statuses = results.map((r) => r.status).sort();
  await Promise.all(results.map((r) => r.body?.cancel()));
  assert.deepEqual(statuses, [200, 200, 422, 422, 422, 422]);
  assert.equal((await tagsOf(id)).length, 40);
  assert.deepEqual(await tagsOfCounts(), []);
});

const tagsOfCounts = () => tagCountDrift(svc);
