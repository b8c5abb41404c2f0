/**
 * S3Store's requests, seen by a small recording server: what goes on the wire, retries, and
 * how answers are read. tests/storage_test.ts runs the store against s3rver.
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { HeadObjectCommand, S3Client } from "npm:@aws-sdk/client-s3@3.1169.0";
import { SignatureV4 } from "npm:@smithy/signature-v4@5.7.5";
import fc from "npm:fast-check@4.10.2";
import { readAll, StorageError } from "./object_store.ts";
import { bucketUrl, type S3Settings, S3Store } from "./s3.ts";
import { sha256Hex } from "../../domain/hash.ts";

interface Seen {
  method: string;
  path: string;
  /** The signature recomputed from the request as it arrived, as S3 checks it. */
  expectedSignature: string;
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
      expectedSignature: await signatureAsReceived(req, url),
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
  return { seen, store, port: server.addr.port, [Symbol.asyncDispose]: () => server.shutdown() };
}

/** SHA-256 and HMAC for the SDK's signer, on node:crypto. */
class NodeSha256 {
  #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac(
      "sha256",
      typeof secret === "string" ? secret : new Uint8Array(secret as ArrayBuffer),
    );
  }
  update(data: string | Uint8Array) {
    this.#hash.update(data);
  }
  digest() {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
}

/**
 * The signature S3 expects for `req` as it arrived: the path, query and signed headers as
 * received, with the key pair the recorder's store uses. A request whose path or headers
 * changed on the way from the signer to the wire fails this.
 */
async function signatureAsReceived(req: Request, url: URL): Promise<string> {
  const auth = req.headers.get("authorization") ?? "";
  const names = /SignedHeaders=([^,\s]+)/.exec(auth)?.[1].split(";") ?? [];
  const scope = /Credential=[^/]+\/(\d{8})\/([^/]+)\//.exec(auth);
  const stamp = req.headers.get("x-amz-date") ?? "";
  if (!scope || !stamp) return "";
  const signer = new SignatureV4({
    service: "s3",
    region: scope[2],
    credentials: { accessKeyId: "key", secretAccessKey: "secret" },
    sha256: NodeSha256,
    uriEscapePath: false,
  });
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signed = await signer.sign({
    method: req.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: Object.fromEntries(names.map((n) => [n, req.headers.get(n) ?? ""])),
  }, {
    signingDate: new Date(
      stamp.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"),
    ),
  });
  return /Signature=([0-9a-f]{64})/.exec(signed.headers["authorization"])?.[1] ?? "";
}

/** The request path the AWS SDK's S3 client sends for `key` (captured; nothing is sent). */
async function sdkPath(key: string): Promise<string> {
  let path = "";
  const client = new S3Client({
    region: "eu-central-1",
    endpoint: "http://127.0.0.1:9",
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: "key", secretAccessKey: "secret" },
    requestHandler: {
      handle(request: { path: string }) {
        path = request.path;
        return Promise.reject(new Error("captured"));
      },
    },
  });
  await client.send(new HeadObjectCommand({ Bucket: "bucket", Key: key })).catch(() => {});
  client.destroy();
  return path;
}

const signatureOf = (s: Seen) =>
  /Signature=([0-9a-f]{64})/.exec(s.headers.get("authorization")!)![1];

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

Deno.test("S3Store.put() sends a byte body without handing it to fetch, which would copy it whole", async () => {
  await using rec = recorder();
  // Several write pieces, and a view into a larger buffer.
  const data = randomBytes(1_100_000).subarray(7, 7 + 1_000_003);
  const realFetch = globalThis.fetch;
  const fetched: unknown[] = [];
  globalThis.fetch = (input, init) => {
    fetched.push(init?.body);
    return realFetch(input, init);
  };
  try {
    await rec.store.put("images/big", data, {
      contentLength: data.length,
      contentType: "image/png",
    });
    await rec.store.head("images/big");
  } finally {
    globalThis.fetch = realFetch;
  }
  // The HEAD went through fetch; the put did not.
  assert.deepEqual(fetched, [undefined]);
  assert.equal(rec.seen[0].headers.get("content-length"), String(data.length));
  assert.deepEqual(rec.seen[0].body, data);
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

/** Keys people give objects: spaces, `+`, `%`, `~`, unicode, reserved and unsafe characters. */
const REAL_KEYS = [
  "images/a b",
  "images/a+b",
  "images/100% real",
  "images/%2F%20",
  "images/~user/~",
  "images/é/漢字/😀",
  "images/a&b=c;d,e:f@g$h!i'j(k)l*m",
  'images/q?x#y[z]{w}|^`\\<>"',
  "images//double//slash/",
  "images/.hidden/..backup/...",
  "thumbnails/Ab3dE5gH.webp",
];

Deno.test("S3Store sends each key as the AWS SDK's S3 client does, signed as it arrives", async () => {
  await using rec = recorder();
  for (const key of REAL_KEYS) {
    const before = rec.seen.length;
    await rec.store.head(key);
    const seen = rec.seen[before];
    assert.equal(seen.path, await sdkPath(key), key);
    assert.equal(signatureOf(seen), seen.expectedSignature, key);
  }
});

Deno.test("S3Store refuses a key a URL would resolve to another object (. and .. segments)", async () => {
  await using rec = recorder();
  for (const key of ["images/../x", "images/./x", "..", "images/x/..", ""]) {
    await assert.rejects(rec.store.head(key), StorageError, key);
    // The SDK sends such a path as it is; fetch (any WHATWG URL) would resolve it elsewhere.
    const path = await sdkPath(key);
    if (key) assert.notEqual(new URL(path, "http://h").pathname, path, key);
  }
  assert.equal(rec.seen.length, 0, "nothing was sent");
});

Deno.test("S3Store encodes any key as the SDK does, and every request verifies as received", async () => {
  await using rec = recorder();
  const segment = fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 })
    .filter((s) => s !== "." && s !== ".." && !s.includes("/"));
  await fc.assert(
    fc.asyncProperty(
      fc.array(segment, { minLength: 1, maxLength: 3 }),
      fc.dictionary(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
        fc.string({ unit: "grapheme", maxLength: 6 }),
        { maxKeys: 2 },
      ),
      async (segments, prefixQuery) => {
        const key = segments.join("/");
        const before = rec.seen.length;
        await rec.store.head(key);
        const seen = rec.seen[before];
        assert.equal(seen.path, await sdkPath(key));
        assert.equal(signatureOf(seen), seen.expectedSignature);
        // A list request carries its prefix in the query, encoded and signed the same way.
        const prefix = Object.values(prefixQuery).join("");
        await Array.fromAsync(rec.store.list(prefix));
        const listed = rec.seen.at(-1)!;
        assert.equal(listed.query.get("prefix"), prefix);
        assert.equal(signatureOf(listed), listed.expectedSignature);
      },
    ),
    { numRuns: 200 },
  );
});

/** A store on `port` whose requests fail after `timeoutMs` without progress. */
function storeOn(port: number, timeoutMs: number) {
  return new S3Store({
    bucket: "bucket",
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    accessKeyId: "key",
    secretAccessKey: "secret",
    forcePathStyle: true,
    timeoutMs,
  });
}

/** A server that accepts connections and never answers, as a frozen process does. */
function silentServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) conns.push(conn);
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get connections() {
      return conns.length;
    },
    [Symbol.dispose]() {
      listener.close();
      for (const c of conns) c.close();
    },
  };
}

/** A server whose GET answers `chunks` (each after its delay), or stalls at a null chunk. */
function streamingServer(chunks: [delayMs: number, bytes: Uint8Array | null][]) {
  const stalled = new Set<ReadableStreamDefaultController>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    let i = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(ctl) {
          if (i === chunks.length) return ctl.close();
          const [delay, bytes] = chunks[i++];
          await new Promise((r) => setTimeout(r, delay));
          if (bytes) ctl.enqueue(bytes);
          else stalled.add(ctl); // never another byte
        },
      }),
      { headers: { "content-type": "image/png" } },
    );
  });
  return {
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      for (const ctl of stalled) ctl.close();
      await server.shutdown();
    },
  };
}

/** How long `p` took to settle, and its error (if it failed); a hang fails after 10 s. */
async function timed(p: Promise<unknown>): Promise<{ ms: number; error?: unknown }> {
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("still waiting after 10 s")), 10_000);
  });
  try {
    await Promise.race([p, hang]);
    return { ms: performance.now() - t0 };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A failure at a 0.3 s deadline came after 301-314 ms (5 calls, 2 cores under load): only a
 * hang fails this bound (hang guard: ~16x the measured time).
 */
const HANG_GUARD_MS = 5_000;

Deno.test("S3Store fails a request that gets no answer once its deadline passes, and does not retry it", async () => {
  using silent = silentServer();
  const store = storeOn(silent.port, 300);
  const bytes = new Uint8Array(1000);
  for (
    const call of [
      () => store.head("images/a"),
      () => store.get("images/a"),
      () => store.put("images/a", bytes, { contentLength: 1000, contentType: "image/png" }),
      () => store.delete("images/a"),
      () => store.check(),
    ]
  ) {
    const before = silent.connections;
    const { ms, error } = await timed(call());
    assert.ok(error instanceof StorageError, String(error));
    assert.match((error as Error).message, /no progress for 0\.3 s/);
    assert.ok(ms >= 290, `failed after ${ms} ms, before its deadline`);
    assert.ok(ms < HANG_GUARD_MS, `failed after ${ms} ms`);
    // A byte body would be sent again after a fast failure, never after its deadline.
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(silent.connections - before, 1, "one connection, no retry");
  }
});

Deno.test("S3Store fails a body that stops arriving mid-way, once its deadline passes", async () => {
  await using server = streamingServer([[0, new Uint8Array(70_000)], [0, null]]);
  const obj = await storeOn(server.port, 300).get("images/a");
  assert.equal(obj!.length, null, "a chunked answer has no length, not a length of 0");
  const reader = obj!.body.getReader();
  assert.ok(((await reader.read()).value?.length ?? 0) > 0);
  const { ms, error } = await timed((async () => {
    while (!(await reader.read()).done);
  })());
  assert.ok(error instanceof StorageError, String(error));
  assert.match((error as Error).message, /S3 get failed while reading: no progress for 0\.3 s/);
  assert.ok(ms >= 290, `failed after ${ms} ms, before its deadline`);
  assert.ok(ms < HANG_GUARD_MS, `failed after ${ms} ms`);
});

Deno.test("S3Store never cuts a body that keeps coming, nor counts the time its reader pauses", async () => {
  // Twelve chunks 100 ms apart: 1.2 s in all against a deadline of 0.35 s.
  const chunk = new Uint8Array(50_000).fill(7);
  await using server = streamingServer(Array.from({ length: 12 }, () => [100, chunk]));
  const store = storeOn(server.port, 350);
  let total = 0;
  for await (const part of (await store.get("images/a"))!.body) total += part.length;
  assert.equal(total, 12 * chunk.length);

  // A reader that stops for three deadlines (a slow client downstream) is not the server's fault.
  const reader = (await store.get("images/a"))!.body.getReader();
  total = (await reader.read()).value!.length;
  await new Promise((r) => setTimeout(r, 1050));
  for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.length;
  assert.equal(total, 12 * chunk.length);
});

Deno.test("S3Store sends a streamed body from a slow source without cutting it", async () => {
  await using rec = recorder();
  const store = storeOn(rec.port, 300);
  let sent = 0;
  // Each chunk takes the source longer than the deadline: that wait is not the server's.
  const source = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (sent === 4) return ctl.close();
      await new Promise((r) => setTimeout(r, 450));
      ctl.enqueue(new Uint8Array(1000).fill(++sent));
    },
  });
  await store.put("images/slow", source, { contentLength: 4000, contentType: "image/png" });
  assert.equal(rec.seen[0].body.length, 4000);
});
