/**
 * The byte routes over real HTTP (a Deno.serve of the app), where the delivery cache cannot
 * answer: objects above its 4 MiB limit streamed with their bytes compared, single ranges read
 * from storage, HEAD without a body and without a read, and answers of unknown length streamed
 * as they come instead of read whole.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { createApp } from "../wiring/app.ts";
import { CACHED_OBJECT_BYTES } from "../api/delivery.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import type { ByteRange, ObjectStore } from "../adapters/storage/mod.ts";
import { S3Store } from "../adapters/storage/s3.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, upload } from "./_harness/images.ts";
import { within } from "./_harness/waits.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000, timeoutMs: 20_000 });
const svc = await startService({ thumbnails: pool });
const auth = await authHeader(svc.app);
addEventListener("unload", () => pool.close());

/** A PNG of noise, stored uncompressed: `width` x `height` x 3 bytes and a little more. */
async function noisePng(width: number, height: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(width * height * 3);
  for (let at = 0; at < pixels.length; at += 65536) {
    crypto.getRandomValues(pixels.subarray(at, at + 65536));
  }
  const png = sharp(pixels, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 });
  return new Uint8Array(await png.toBuffer());
}

const big = await noisePng(1400, 1100);
assert.ok(big.length > CACHED_OBJECT_BYTES, "the test object must be above the cache's limit");
const created = await upload(svc.app, auth, big);
assert.equal(created.status, 201);
const img: { short_id: string; hash: string; thumbnail_key: string } = await created.json();

/** The service's store, recording what the byte routes ask of it. */
function recording(inner: ObjectStore) {
  const calls: string[] = [];
  const store: ObjectStore = {
    put: (key, body, opts) => inner.put(key, body, opts),
    get: (key: string, range?: ByteRange) => {
      calls.push(`get ${key}${range ? ` ${range.start}-${range.end}` : ""}`);
      return inner.get(key, range);
    },
    head: (key) => {
      calls.push(`head ${key}`);
      return inner.head(key);
    },
    copy: (from, to) => inner.copy(from, to),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
    check: (signal) => inner.check(signal),
  };
  return { store, calls };
}

/** The app on `store`, served on a loopback port. */
function serveWith(store: ObjectStore) {
  const app = createApp({ ...svc.services, store });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  return {
    base: `http://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const file = `/api/v1/images/${img.short_id}/file`;
const thumbnail = `/api/v1/images/${img.short_id}/thumbnail`;

Deno.test("GET /file streams an object above the cache's limit over HTTP, byte for byte, from storage each time", async () => {
  const rec = recording(svc.s3.store);
  await using http = serveWith(rec.store);
  for (let i = 0; i < 2; i++) {
    const res = await fetch(http.base + file);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-length"), String(big.length));
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), big);
  }
  assert.deepEqual(rec.calls, [`get images/${img.short_id}`, `get images/${img.short_id}`]);
});

Deno.test("GET /file serves single ranges from storage: start, middle, suffix and to the end", async () => {
  const rec = recording(svc.s3.store);
  await using http = serveWith(rec.store);
  const n = big.length;
  const cases: [string, number, number][] = [
    ["bytes=0-99", 0, 99],
    ["bytes=1000000-2999999", 1_000_000, 2_999_999],
    ["bytes=-5000", n - 5000, n - 1],
    ["bytes=4000000-", 4_000_000, n - 1],
  ];
  for (const [range, start, end] of cases) {
    const res = await fetch(http.base + file, { headers: { range } });
    assert.equal(res.status, 206, range);
    assert.equal(res.headers.get("content-range"), `bytes ${start}-${end}/${n}`, range);
    assert.equal(res.headers.get("content-length"), String(end - start + 1), range);
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), big.slice(start, end + 1), range);
  }
  // Each range was asked of storage as such, not cut from a whole read.
  assert.deepEqual(
    rec.calls,
    cases.map(([, start, end]) => `get images/${img.short_id} ${start}-${end}`),
  );
});

/** A raw HTTP/1.1 HEAD: the head, and every byte after it until the server closes. */
async function rawHead(port: number, path: string, extra = "") {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(
      `HEAD ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`,
    ),
  );
  const text = await within(new Response(conn.readable).text(), 10_000, `HEAD ${path}`);
  const split = text.indexOf("\r\n\r\n");
  return { head: text.slice(0, split), after: text.slice(split + 4) };
}

Deno.test("HEAD answers without a body and without reading the object: the row, or a HEAD to storage", async () => {
  const thumb = await svc.s3.store.head(img.thumbnail_key);
  const rec = recording(svc.s3.store);
  await using http = serveWith(rec.store);
  const got = await rawHead(http.port, file);
  assert.match(got.head, /^HTTP\/1\.1 200/);
  assert.match(got.head, new RegExp(`\r\ncontent-length: ${big.length}\r\n`, "i"));
  assert.equal(got.after, "", "no body after the head");
  const part = await rawHead(http.port, file, "Range: bytes=10-19\r\n");
  assert.match(part.head, /^HTTP\/1\.1 206/);
  assert.match(part.head, new RegExp(`\r\ncontent-range: bytes 10-19/${big.length}\r\n`, "i"));
  assert.match(part.head, /\r\ncontent-length: 10\r\n/i);
  assert.equal(part.after, "");
  const t = await rawHead(http.port, thumbnail);
  assert.match(t.head, /^HTTP\/1\.1 200/);
  assert.match(t.head, new RegExp(`\r\ncontent-length: ${thumb!.size}\r\n`, "i"));
  assert.match(t.head, /\r\ncontent-type: image\/webp\r\n/i);
  assert.equal(t.after, "");
  // The file's size is in its row; the thumbnail's came from a HEAD to storage. Nothing was read.
  assert.deepEqual(rec.calls, [`head ${img.thumbnail_key}`]);
  // Once the thumbnail is in the delivery cache, a HEAD asks storage nothing at all.
  await (await fetch(http.base + thumbnail)).arrayBuffer();
  const again = await rawHead(http.port, thumbnail);
  assert.match(again.head, new RegExp(`\r\ncontent-length: ${thumb!.size}\r\n`, "i"));
  assert.deepEqual(rec.calls, [`head ${img.thumbnail_key}`, `get ${img.thumbnail_key}`]);
});

/**
 * An S3 server whose GET answers `bytes` without a Content-Length (chunked), sending the last
 * 1000 bytes only once `release` is called: a service that reads an answer whole before it
 * responds never responds.
 */
function chunkedS3(bytes: Uint8Array) {
  let release = () => {};
  const released = new Promise<void>((r) => release = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.method !== "GET") return new Response(null, { status: 200 });
    const body = new ReadableStream<Uint8Array>({
      async start(ctl) {
        ctl.enqueue(bytes.slice(0, bytes.length - 1000));
        await released;
        ctl.enqueue(bytes.slice(bytes.length - 1000));
        ctl.close();
      },
    });
    return new Response(body, { headers: { "content-type": "image/png" } });
  });
  const store = new S3Store({
    ...svc.s3.settings,
    endpoint: `http://127.0.0.1:${server.addr.port}`,
  });
  return {
    store,
    release,
    [Symbol.asyncDispose]: () => {
      release();
      return server.shutdown();
    },
  };
}

Deno.test("an S3 answer without Content-Length is streamed as it comes, never read whole first", async () => {
  // A small image, which the cache would take if its length were known.
  const small = await noisePng(60, 40);
  const up = await upload(svc.app, auth, small);
  assert.equal(up.status, 201);
  const { short_id } = await up.json();
  await using s3 = chunkedS3(small);
  await using http = serveWith(s3.store);
  const res = await within(fetch(`${http.base}/api/v1/images/${short_id}/file`), 10_000, "GET");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-length"), null, "no length was known");
  const reader = res.body!.getReader();
  const first = await within(reader.read(), 10_000, "the first bytes");
  assert.ok((first.value?.length ?? 0) > 0);
  s3.release();
  const rest: Uint8Array[] = [first.value!];
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value);
  assert.deepEqual(new Uint8Array(await new Blob(rest as BlobPart[]).arrayBuffer()), small);
});

Deno.test.afterAll(async () => {
  await svc.close();
});
