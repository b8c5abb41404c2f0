/**
 * The JPEG renditions for chat clients (issue 43): `/images/{id}/preview.jpg` (at most 1280 px)
 * and `/thumbnail.jpg` (at most 400 px) decode as JPEG within their limits, a GIF's first frame
 * included; they carry an ETag and immutable caching and answer 304; each is made once, at its
 * first request, and kept in storage, so a service that makes none (as the edge reader) serves
 * it; deleting the image removes them.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import type { Thumbnailer } from "../services/deps.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
/** The pool, counting the renditions it is asked to make. */
let made = 0;
const counting: Thumbnailer = {
  thumbnail: (input, signal) => pool.thumbnail(input, signal),
  jpeg: (input, maxSide, signal) => {
    made++;
    return pool.jpeg(input, maxSide, signal);
  },
};
const svc = await startService({ thumbnails: counting });
// Shares the database and storage, makes no renditions: what the edge reader does.
const reader = await startService({ db: svc.db, s3: svc.s3 });
Deno.test.afterAll(async () => {
  await reader.close();
  await svc.close();
  pool.close();
});
const auth = await authHeader(svc.app);

async function seed(bytes: Uint8Array): Promise<string> {
  const res = await upload(svc.app, auth, bytes);
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).short_id;
}

async function jpegOf(res: Response) {
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get("content-type"), "image/jpeg");
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(res.headers.get("content-length"), String(bytes.length));
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, width: meta.width, height: meta.height, bytes: bytes.length };
}

const get = (app: typeof svc.app, path: string, headers: Record<string, string> = {}) =>
  app.request(`/api/v1/images/${path}`, { headers });

Deno.test("a large PNG's preview is a JPEG of 1280 px, its thumbnail one of 400 px", async () => {
  const id = await seed(await makeImage("png", 3000, 2000));
  const preview = await jpegOf(await get(svc.app, `${id}/preview.jpg`));
  assert.deepEqual({ ...preview, bytes: undefined }, {
    format: "jpeg",
    width: 1280,
    height: 853,
    bytes: undefined,
  });
  assert.ok(preview.bytes <= 5 * 1024 * 1024, `${preview.bytes} bytes`);
  const thumb = await jpegOf(await get(svc.app, `${id}/thumbnail.jpg`));
  assert.deepEqual([thumb.format, thumb.width, thumb.height], ["jpeg", 400, 267]);
});

Deno.test("a GIF's renditions are JPEGs of its first frame; a small image is never enlarged", async () => {
  const id = await seed(await makeImage("gif", 300, 200));
  const preview = await jpegOf(await get(svc.app, `${id}/preview.jpg`));
  assert.deepEqual([preview.format, preview.width, preview.height], ["jpeg", 300, 200]);
  const thumb = await jpegOf(await get(svc.app, `${id}/thumbnail.jpg`));
  assert.deepEqual([thumb.format, thumb.width, thumb.height], ["jpeg", 300, 200]);
});

Deno.test("renditions have an ETag, immutable caching and answer 304; HEAD sends no body", async () => {
  const id = await seed(await makeImage("jpeg", 800, 600));
  const res = await get(svc.app, `${id}/preview.jpg`);
  await jpegOf(res);
  const etag = res.headers.get("etag")!;
  assert.match(etag, /^"[0-9a-f]{64}-preview-jpg"$/);
  assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const again = await get(svc.app, `${id}/preview.jpg`, { "if-none-match": etag });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), "");
  // The thumbnail's tag is its own: the preview's does not match it.
  const thumb = await get(svc.app, `${id}/thumbnail.jpg`, { "if-none-match": etag });
  assert.equal(thumb.status, 200);
  assert.notEqual(thumb.headers.get("etag"), etag);
  await thumb.body?.cancel();
  const head = await svc.app.request(`/api/v1/images/${id}/thumbnail.jpg`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
});

Deno.test("each rendition is made once and kept: concurrent and later requests reuse it", async () => {
  const id = await seed(await makeImage("png", 640, 480));
  const before = made;
  const answers = await Promise.all(
    Array.from({ length: 4 }, () => get(svc.app, `${id}/preview.jpg`)),
  );
  const sizes = await Promise.all(answers.map(async (r) => (await jpegOf(r)).bytes));
  assert.equal(new Set(sizes).size, 1);
  assert.equal(made - before, 1, "one rendition made for four requests");
  const keys = await Array.fromAsync(svc.s3.store.list(`renditions/${id}/`));
  assert.deepEqual(keys, [`renditions/${id}/preview.jpg`]);
  // A service that makes none (the edge reader) serves the kept one, and 404 for one not made.
  const served = await jpegOf(await get(reader.app, `${id}/preview.jpg`));
  assert.equal(served.bytes, sizes[0]);
  const missing = await get(reader.app, `${id}/thumbnail.jpg`);
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { detail: "Image not found" });
  assert.equal(made - before, 1);
});

Deno.test("an unknown image has no renditions; deleting an image removes them", async () => {
  const unknown = await get(svc.app, "ZZZZZZZZ/preview.jpg");
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
  const id = await seed(await makeImage("png", 64, 64));
  for (const kind of ["preview", "thumbnail"]) {
    await jpegOf(await get(svc.app, `${id}/${kind}.jpg`));
  }
  assert.equal((await Array.fromAsync(svc.s3.store.list(`renditions/${id}/`))).length, 2);
  const del = await svc.app.request(`/api/v1/images/${id}`, { method: "DELETE", headers: auth });
  assert.equal(del.status, 204);
  assert.deepEqual(await Array.fromAsync(svc.s3.store.list(`renditions/${id}/`)), []);
});
