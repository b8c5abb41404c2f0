/**
 * S3Store's requests, seen by a small recording server: what goes on the wire, retries, and
 * how answers are read. tests/storage_test.ts runs the store against s3rver.
 */
import assert from "node:assert/strict";
import { readAll, StorageError } from "./mod.ts";
import { bucketUrl, type S3Settings, S3Store } from "./s3.ts";
import { sha256Hex } from "../hash.ts";

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: Uint8Array;
}

/** A server that records each request and answers with `reply`, and a store pointed at it. */
function recorder(
  reply: (req: Seen, n: number) => Response = () => new Response(null),
  settings: Partial<S3Settings> = {},
) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const s = {
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: new Uint8Array(await req.arrayBuffer()),
    };
    seen.push(s);
    return reply(s, seen.length);
  });
  const store = new S3Store({
    bucket: "bucket",
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    region: "eu-central-1",
    accessKeyId: "key",
    secretAccessKey: "secret",
    forcePathStyle: true,
    ...settings,
  });
  return { seen, store, [Symbol.asyncDispose]: () => server.shutdown() };
}

/** `n` random bytes (getRandomValues fills at most 64 KiB a call). */
function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(out.subarray(at, at + 65536));
  return out;
}

const xmlError = (code: string, status: number) =>
  new Response(`<?xml version="1.0"?><Error><Code>${code}</Code></Error>`, {
    status,
    headers: { "content-type": "application/xml" },
  });

Deno.test("bucketUrl() is path-style on the endpoint, or the bucket's own host", () => {
  const base = { bucket: "my-bucket", region: "eu-west-1", forcePathStyle: true };
  assert.equal(
    bucketUrl({ ...base, endpoint: "http://127.0.0.1:9000" }),
    "http://127.0.0.1:9000/my-bucket",
  );
  assert.equal(
    bucketUrl({ ...base, endpoint: "https://minio.example/s3/" }),
    "https://minio.example/s3/my-bucket",
  );
  assert.equal(
    bucketUrl({ ...base, forcePathStyle: false }),
    "https://my-bucket.s3.eu-west-1.amazonaws.com",
  );
  assert.equal(
    bucketUrl({ ...base, forcePathStyle: false, endpoint: "https://r2.example:8443" }),
    "https://my-bucket.r2.example:8443",
  );
});

Deno.test("S3Store.put() sends a byte body with its Content-Length, its hash signed, whole again when sent twice", async () => {
  await using rec = recorder();
  // A view into a larger buffer, as an upload's file is inside its multipart body.
  const data = randomBytes(190_000).subarray(1234, 1234 + 150_001);
  await rec.store.put("images/key", data, { contentLength: data.length, contentType: "image/png" });
  await rec.store.put("images/key", data, { contentLength: data.length, contentType: "image/png" });
  assert.equal(rec.seen.length, 2);
  for (const s of rec.seen) {
    assert.equal(s.method, "PUT");
    assert.equal(s.path, "/bucket/images/key");
    assert.equal(s.headers.get("content-length"), String(data.length));
    assert.equal(s.headers.get("transfer-encoding"), null);
    assert.equal(s.headers.get("content-type"), "image/png");
    assert.equal(s.headers.get("x-amz-content-sha256"), sha256Hex(data));
    assert.match(
      s.headers.get("authorization")!,
      /^AWS4-HMAC-SHA256 Credential=key\/\d{8}\/eu-central-1\/s3\/aws4_request,SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,Signature=[0-9a-f]{64}$/,
    );
    assert.deepEqual(s.body, data);
  }
});

Deno.test("S3Store.put() signs a hash it is given instead of hashing again, and a stream as unsigned", async () => {
  await using rec = recorder();
  const data = new TextEncoder().encode("known payload");
  // Not this body's hash: only a value passed through can arrive here.
  const sha256 = "ab".repeat(32);
  await rec.store.put("images/known", data, {
    contentLength: 13,
    contentType: "image/png",
    sha256,
  });
  await rec.store.put("images/streamed", new Blob([data]).stream(), {
    contentLength: 13,
    contentType: "image/png",
  });
  assert.deepEqual(rec.seen.map((s) => s.headers.get("x-amz-content-sha256")), [
    sha256,
    "UNSIGNED-PAYLOAD",
  ]);
  assert.deepEqual(rec.seen[1].body, data);
});

Deno.test("S3Store retries a byte body once on a transient error, and never a stream", async () => {
  {
    await using rec = recorder((_, n) => n === 1 ? xmlError("SlowDown", 503) : new Response(null));
    const data = randomBytes(200_003);
    await rec.store.put("images/retried", data, { contentLength: data.length, contentType: "x/y" });
    assert.equal(rec.seen.length, 2);
    for (const s of rec.seen) assert.deepEqual(s.body, data);
  }
  {
    await using rec = recorder(() => xmlError("InternalError", 500));
    await assert.rejects(
      rec.store.put("images/s", new Blob([new Uint8Array(10)]).stream(), {
        contentLength: 10,
        contentType: "x/y",
      }),
      (e: Error) => e instanceof StorageError && /500 InternalError/.test(e.message),
    );
    assert.equal(rec.seen.length, 1);
  }
  {
    // A refusal is final: no second attempt.
    await using rec = recorder(() => xmlError("AccessDenied", 403));
    await assert.rejects(rec.store.delete("images/x"), /403 AccessDenied/);
    assert.equal(rec.seen.length, 1);
  }
});

Deno.test("S3Store.copy() fails on an error inside a 200 answer, as S3 may send one", async () => {
  await using rec = recorder(() =>
    new Response("<Error><Code>InternalError</Code></Error>", { status: 200 })
  );
  await assert.rejects(rec.store.copy("images/a b", "thumbnails/c"), StorageError);
  assert.equal(rec.seen[0].headers.get("x-amz-copy-source"), "/bucket/images/a%20b");
  assert.equal(rec.seen[0].path, "/bucket/thumbnails/c");
});

Deno.test("S3Store.list() follows continuation tokens and decodes XML entities", async () => {
  await using rec = recorder((s) => {
    const token = s.query.get("continuation-token");
    const page = token === null
      ? "<Contents><Key>images/a&amp;b</Key></Contents><Contents><Key>images/&#233;</Key></Contents>" +
        "<IsTruncated>true</IsTruncated><NextContinuationToken>t&lt;2</NextContinuationToken>"
      : `<Contents><Key>images/${token === "t<2" ? "last" : "wrong"}</Key></Contents>` +
        "<IsTruncated>false</IsTruncated>";
    return new Response(`<?xml version="1.0"?><ListBucketResult>${page}</ListBucketResult>`);
  });
  assert.deepEqual(await Array.fromAsync(rec.store.list("images/")), [
    "images/a&b",
    "images/é",
    "images/last",
  ]);
  assert.equal(rec.seen[0].path, "/bucket");
  assert.equal(rec.seen[0].query.get("list-type"), "2");
  assert.equal(rec.seen[0].query.get("prefix"), "images/");
  assert.equal(rec.seen[1].query.get("continuation-token"), "t<2");
});

Deno.test("S3Store.get() reads a range's total size; a 404 is null and a 416 its own error", async () => {
  await using rec = recorder((s) => {
    if (s.path.endsWith("/missing")) return xmlError("NoSuchKey", 404);
    if (s.path.endsWith("/short")) return xmlError("InvalidRange", 416);
    if (s.path.endsWith("/empty")) return new Response(null, { status: 204 });
    return new Response("2345", {
      status: 206,
      headers: { "content-range": "bytes 2-5/10", "content-type": "image/gif" },
    });
  });
  const part = await rec.store.get("images/r", { start: 2, end: 5 });
  assert.equal(rec.seen[0].headers.get("range"), "bytes=2-5");
  assert.deepEqual({ length: part!.length, size: part!.size, type: part!.contentType }, {
    length: 4,
    size: 10,
    type: "image/gif",
  });
  assert.equal(new TextDecoder().decode(await readAll(part!.body)), "2345");
  assert.equal(await rec.store.get("images/missing"), null);
  const empty = await rec.store.get("images/empty"); // an answer without a body is an empty one
  assert.deepEqual([empty!.length, await Array.fromAsync(empty!.body)], [0, []]);
  await assert.rejects(rec.store.get("images/short", { start: 20, end: 30 }), {
    name: "RangeNotSatisfiableError",
  });
});
