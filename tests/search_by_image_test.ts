/**
 * Search by image (issue 44), through the API: a recompressed copy finds its original and an
 * unrelated picture finds nothing; the file is sniffed like an upload, capped by
 * MAX_QUERY_IMAGE_BYTES, never stored; each address is limited (429 with Retry-After), the address
 * a trusted proxy names counting as the client's.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload, uploadForm } from "./_harness/images.ts";
import { makeSources, makeVariants, rng } from "./_harness/similar_corpus.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({
  thumbnails: pool,
  env: {
    MAX_QUERY_IMAGE_BYTES: "2000000",
    QUERY_IMAGES_PER_MINUTE: "1000",
    LOGIN_TRUSTED_PROXY_IPS: "10.0.0.1",
  },
});
const limited = await startService({
  thumbnails: pool,
  env: { QUERY_IMAGES_PER_MINUTE: "2", LOGIN_TRUSTED_PROXY_IPS: "10.0.0.1" },
});
Deno.test.afterAll(async () => {
  await svc.close();
  await limited.close();
  pool.close();
});
const auth = await authHeader(svc.app);

/** The socket peer a request comes from (what getConnInfo reads). */
const from = (address: string) => ({
  remoteAddr: { transport: "tcp", hostname: address, port: 1 },
});

function search(
  app: typeof svc.app,
  bytes: Uint8Array,
  opts: { query?: string; peer?: string; headers?: Record<string, string>; type?: string } = {},
) {
  return app.request(
    `/api/v1/images/search-by-image${opts.query ?? ""}`,
    {
      method: "POST",
      headers: opts.headers,
      body: uploadForm(bytes, [], { name: "query.bin", type: opts.type }),
    },
    from(opts.peer ?? "192.0.2.10"),
  );
}

async function seed(bytes: Uint8Array): Promise<string> {
  const res = await upload(svc.app, auth, bytes, ["searched"]);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return (await res.json()).short_id;
}

async function stored() {
  const [{ rows }] = await svc.db.sql`select count(*)::int as rows from images`;
  const objects = (await Array.fromAsync(svc.s3.store.list(""))).length;
  const [{ jobs }] = await svc.db.sql`
    select count(*)::int as jobs from pgboss.job`.catch(() => [{ jobs: 0 }]);
  return { rows, objects, jobs };
}

const [photo, other] = await makeSources(2, 441);
const reposts = await makeVariants(photo, 441, ["jpeg q30"]);
const recompressed = reposts.find((v) => v.name === "jpeg q30")!.bytes;

Deno.test("a recompressed copy finds its original, nearest first; an unrelated picture nothing", async () => {
  const original = await seed(photo.bytes);
  const res = await search(svc.app, recompressed);
  assert.equal(res.status, 200);
  const { items } = await res.json();
  assert.ok(items.length >= 1, "found something");
  assert.equal(items[0].image.short_id, original);
  assert.ok(items[0].distance <= 8, `distance ${items[0].distance}`);
  assert.deepEqual(items[0].image.tags.map((t: { name: string }) => t.name), ["searched"]);
  assert.equal(items[0].image.file_url, `/api/v1/images/${original}/file`);

  const unrelated = await search(svc.app, other.bytes);
  assert.equal(unrelated.status, 200);
  assert.deepEqual(await unrelated.json(), { items: [] });
  // max_distance 0 keeps only an identical hash: the q30 copy differs by some bits.
  const exact = await search(svc.app, photo.bytes, { query: "?max_distance=0" });
  assert.deepEqual((await exact.json()).items.map((i: { distance: number }) => i.distance), [0]);
});

Deno.test("the query image is never stored: no row, no object, no job", async () => {
  await seed(photo.bytes);
  const before = await stored();
  const fresh = await makeImage("png", 300, 200);
  for (const bytes of [fresh, recompressed]) {
    assert.equal((await search(svc.app, bytes)).status, 200);
  }
  assert.deepEqual(await stored(), before);
});

Deno.test("the file is sniffed like an upload: the declared type is ignored, text is 415", async () => {
  const png = await makeImage("png", 64, 64);
  // A PNG declared as text is read as the PNG it is.
  assert.equal((await search(svc.app, png, { type: "text/plain" })).status, 200);
  const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>');
  const res = await search(svc.app, svg, { type: "image/png" });
  assert.equal(res.status, 415);
  assert.equal((await res.json()).code, "unsupported_image");
  // A valid header over broken pixels: the decoder's refusal is a 415 too, not a 500.
  const broken = png.slice(0, 60);
  const cut = await search(svc.app, broken, { type: "image/png" });
  assert.equal(cut.status, 415);
});

Deno.test("a file over MAX_QUERY_IMAGE_BYTES is 413 with the limit; the upload's is its own", async () => {
  const big = new Uint8Array(2_000_001);
  big.set(await makeImage("png", 16, 16));
  const res = await search(svc.app, big);
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), {
    code: "upload_too_large",
    detail: "The file is larger than the limit of 2000000 bytes",
    max_bytes: 2000000,
  });
  // The JSON body cap (64 KiB) of other routes does not apply: a noisy PNG of 270 KB is read.
  const next = rng(5);
  const noise = new Uint8Array(300 * 300 * 3).map(() => Math.floor(next() * 256));
  const noisy = new Uint8Array(
    await sharp(noise, { raw: { width: 300, height: 300, channels: 3 } }).png().toBuffer(),
  );
  assert.ok(noisy.length > 200_000, `${noisy.length} bytes`);
  assert.equal((await search(svc.app, noisy)).status, 200);
});

Deno.test("no file is 422, a bad max_distance is 422, a body that is no form 400", async () => {
  const noFile = await svc.app.request("/api/v1/images/search-by-image", {
    method: "POST",
    body: (() => {
      const f = new FormData();
      f.append("tags", "x");
      return f;
    })(),
  }, from("192.0.2.11"));
  assert.equal(noFile.status, 422);
  assert.deepEqual(await noFile.json(), { detail: "file: a file is required" });
  const far = await search(svc.app, recompressed, { query: "?max_distance=99" });
  assert.equal(far.status, 422);
  const json = await svc.app.request("/api/v1/images/search-by-image", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  }, from("192.0.2.12"));
  assert.equal(json.status, 400);
});

Deno.test("each address may search QUERY_IMAGES_PER_MINUTE times a minute, then 429", async () => {
  const png = await makeImage("png", 32, 32);
  for (let i = 0; i < 2; i++) {
    assert.equal((await search(limited.app, png, { peer: "198.51.100.7" })).status, 200);
  }
  const refused = await search(limited.app, png, { peer: "198.51.100.7" });
  assert.equal(refused.status, 429);
  const retry = Number(refused.headers.get("retry-after"));
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  const body = await refused.json();
  assert.equal(body.code, "rate_limited");
  assert.equal(body.retry_after, retry);
  // Another address has its own budget.
  assert.equal((await search(limited.app, png, { peer: "198.51.100.8" })).status, 200);
});

Deno.test("behind a trusted proxy, the address it names is the one limited", async () => {
  const png = await makeImage("png", 32, 32);
  const via = (client: string) =>
    search(limited.app, png, { peer: "10.0.0.1", headers: { "x-real-ip": client } });
  assert.equal((await via("203.0.113.1")).status, 200);
  assert.equal((await via("203.0.113.1")).status, 200);
  assert.equal((await via("203.0.113.1")).status, 429);
  // The proxy's other clients are not refused with it.
  assert.equal((await via("203.0.113.2")).status, 200);
  // An untrusted peer cannot choose its address by the header.
  const forged = (client: string) =>
    search(limited.app, png, { peer: "198.51.100.9", headers: { "x-real-ip": client } });
  assert.equal((await forged("203.0.113.3")).status, 200);
  assert.equal((await forged("203.0.113.4")).status, 200);
  assert.equal((await forged("203.0.113.5")).status, 429);
});
