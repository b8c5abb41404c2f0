import assert from "node:assert/strict";
import sharp from "sharp";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ thumbnails: pool });
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
addEventListener("unload", () => pool.close());

const bytes = await makeImage("jpeg", 900, 300);
const img = await (await upload(svc.app, auth, bytes, ["wide"])).json();

Deno.test("GET /file streams the bytes with the stored type, ETag, immutable caching and nosniff", async () => {
  const res = await svc.app.request(img.file_url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/jpeg");
  assert.equal(res.headers.get("etag"), `"${img.hash}"`);
  assert.match(res.headers.get("cache-control")!, /immutable/);
  assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("content-length"), String(bytes.length));
  assert.equal(res.headers.get("location"), null, "no redirect");
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
});

Deno.test("GET /file answers 304 to a matching If-None-Match", async () => {
  for (const inm of [`"${img.hash}"`, `W/"${img.hash}"`, `"other", "${img.hash}"`, "*"]) {
    const res = await svc.app.request(img.file_url, { headers: { "if-none-match": inm } });
    assert.equal(res.status, 304, inm);
    assert.equal(res.headers.get("etag"), `"${img.hash}"`);
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  }
  const miss = await svc.app.request(img.file_url, { headers: { "if-none-match": `"nope"` } });
  assert.equal(miss.status, 200);
  await miss.body?.cancel();
});

Deno.test("GET /file honours a single byte range with 206, and 416 when unsatisfiable", async () => {
  const cases: [string, number, number][] = [
    ["bytes=0-9", 0, 9],
    ["bytes=10-", 10, bytes.length - 1],
    ["bytes=-5", bytes.length - 5, bytes.length - 1],
    [`bytes=5-${bytes.length + 100}`, 5, bytes.length - 1],
  ];
  for (const [range, start, end] of cases) {
    const res = await svc.app.request(img.file_url, { headers: { range } });
    assert.equal(res.status, 206, range);
    assert.equal(res.headers.get("content-range"), `bytes ${start}-${end}/${bytes.length}`);
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes.slice(start, end + 1));
  }
  for (const range of [`bytes=${bytes.length}-`, `bytes=${bytes.length + 5}-${bytes.length + 9}`]) {
    const bad = await svc.app.request(img.file_url, { headers: { range } });
    assert.equal(bad.status, 416, range);
    assert.equal(bad.headers.get("content-range"), `bytes */${bytes.length}`);
  }
});

Deno.test("GET /file ignores a syntactically invalid range and sends it all (RFC 9110)", async () => {
  for (const range of ["bytes=5-3", "bytes=abc", "bytes=0-1,5-9", "items=0-9", "bytes=-"]) {
    for (const method of ["GET", "HEAD"]) {
      const res = await svc.app.request(img.file_url, { method, headers: { range } });
      assert.equal(res.status, 200, `${method} ${range}`);
      assert.equal(res.headers.get("content-range"), null, range);
      assert.equal(res.headers.get("content-length"), String(bytes.length), range);
      if (method === "GET") assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
    }
  }
});

Deno.test("HEAD /file answers the headers without a body", async () => {
  const res = await svc.app.request(img.file_url, { method: "HEAD" });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-length"), String(bytes.length));
  assert.equal(res.headers.get("content-type"), "image/jpeg");
  assert.equal(res.headers.get("etag"), `"${img.hash}"`);
});

Deno.test("GET /thumbnail serves the WebP thumbnail with its own ETag", async () => {
  const res = await svc.app.request(img.thumbnail_url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/webp");
  assert.match(res.headers.get("cache-control")!, /immutable/);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const etag = res.headers.get("etag")!;
  assert.notEqual(etag, `"${img.hash}"`);
  const meta = await sharp(new Uint8Array(await res.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ["webp", 400, 133]);
  const again = await svc.app.request(img.thumbnail_url, { headers: { "if-none-match": etag } });
  assert.equal(again.status, 304);
});

Deno.test("GET /thumbnail of an image without a thumbnail serves the original", async () => {
  await svc.db.sql`update images set thumbnail_key = null where short_id = ${img.short_id}`;
  try {
    const res = await svc.app.request(`/api/v1/images/${img.short_id}/thumbnail`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/jpeg");
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
  } finally {
    await svc.db
      .sql`update images set thumbnail_key = ${img.thumbnail_key} where short_id = ${img.short_id}`;
  }
});

Deno.test("byte routes answer 404 for unknown or malformed IDs and 503 when storage is down", async () => {
  for (const id of ["ZZZZZZZZ", "..%2F..%2Fetc", "' or 1=1 --", "x".repeat(500)]) {
    for (const which of ["file", "thumbnail"]) {
      const res = await svc.app.request(`/api/v1/images/${id}/${which}`);
      assert.equal(res.status, 404, `${id} ${which}`);
      await res.body?.cancel();
    }
  }
  // An image nobody has fetched yet, so the delivery cache cannot answer for storage.
  const unseen = await (await upload(svc.app, auth, await makeImage("png", 40, 40))).json();
  await svc.s3.stop();
  try {
    const res = await svc.app.request(unseen.file_url);
    assert.equal(res.status, 503);
    const text = await res.text();
    assert.equal(/127\.0\.0\.1|S3|ECONN|bucket/i.test(text), false, text);
  } finally {
    await svc.s3.restart();
  }
});

Deno.test("a small object read whole is served from memory after, until its image is deleted", async () => {
  const png = await makeImage("png", 120, 80);
  const fresh = await (await upload(svc.app, auth, png)).json();
  const first = await svc.app.request(fresh.file_url);
  assert.deepEqual(new Uint8Array(await first.arrayBuffer()), png);
  await svc.s3.stop();
  try {
    const again = await svc.app.request(fresh.file_url);
    assert.equal(again.status, 200, "served without storage");
    assert.equal(again.headers.get("content-type"), "image/png");
    assert.equal(again.headers.get("etag"), `"${fresh.hash}"`);
    assert.equal(again.headers.get("content-length"), String(png.length));
    assert.deepEqual(new Uint8Array(await again.arrayBuffer()), png);
    const part = await svc.app.request(fresh.file_url, { headers: { range: "bytes=3-9" } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get("content-range"), `bytes 3-9/${png.length}`);
    assert.deepEqual(new Uint8Array(await part.arrayBuffer()), png.slice(3, 10));
    const gone = await svc.app.request(`/api/v1/images/${fresh.short_id}`, {
      method: "DELETE",
      headers: auth,
    });
    assert.equal(gone.status, 204);
    const after = await svc.app.request(fresh.file_url);
    assert.equal(after.status, 404, "the row is looked up before the cache");
    await after.body?.cancel();
  } finally {
    await svc.s3.restart();
  }
});

Deno.test("DELIVERY_CACHE_MB=0 keeps nothing: every GET reads storage", async () => {
  const off = await startService({ db: svc.db, s3: svc.s3, env: { DELIVERY_CACHE_MB: "0" } });
  const fresh = await (await upload(off.app, auth, await makeImage("png", 30, 30))).json();
  const first = await off.app.request(fresh.file_url);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  await svc.s3.stop();
  try {
    const again = await off.app.request(fresh.file_url);
    assert.equal(again.status, 503);
    await again.body?.cancel();
  } finally {
    await svc.s3.restart();
  }
});

Deno.test("with S3_PUBLIC_BASE_URL unset the URLs are the proxy paths", () => {
  assert.equal(img.file_url, `/api/v1/images/${img.short_id}/file`);
  assert.equal(img.thumbnail_url, `/api/v1/images/${img.short_id}/thumbnail`);
});

Deno.test("S3_PUBLIC_BASE_URL is trimmed and both URLs join it with the object keys", async () => {
  for (const base of ["  https://cdn.example.com/board/ \n", "https://cdn.example.com/board"]) {
    const cdn = await startService({ db: svc.db, s3: svc.s3, env: { S3_PUBLIC_BASE_URL: base } });
    const got = await (await cdn.app.request(`/api/v1/images/${img.short_id}`)).json();
    assert.equal(got.file_url, `https://cdn.example.com/board/images/${img.short_id}`);
    assert.equal(
      got.thumbnail_url,
      `https://cdn.example.com/board/thumbnails/${img.short_id}.webp`,
    );
    const listed = await (await cdn.app.request(`/api/v1/images?limit=1`)).json();
    assert.equal(
      listed.items[0].file_url.startsWith("https://cdn.example.com/board/images/"),
      true,
    );
  }
});

Deno.test("GET /file: a suffix range longer than the file is the whole file; bytes=-0 is 416", async () => {
  // RFC 9110 14.1.2: a suffix longer than the representation selects all of it; a suffix of
  // zero bytes selects nothing, so it is unsatisfiable.
  const n = bytes.length;
  for (const method of ["GET", "HEAD"]) {
    for (const range of [`bytes=-${n + 100}`, `bytes=-${n}`]) {
      const res = await svc.app.request(img.file_url, { method, headers: { range } });
      assert.equal(res.status, 206, `${method} ${range}`);
      assert.equal(res.headers.get("content-range"), `bytes 0-${n - 1}/${n}`, `${method} ${range}`);
      assert.equal(res.headers.get("content-length"), String(n), `${method} ${range}`);
      if (method === "GET") assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
    }
    const none = await svc.app.request(img.file_url, { method, headers: { range: "bytes=-0" } });
    assert.equal(none.status, 416, `${method} bytes=-0`);
    assert.equal(none.headers.get("content-range"), `bytes */${n}`);
    assert.equal((await none.arrayBuffer()).byteLength, 0);
  }
});
