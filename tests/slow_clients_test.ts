/**
 * Clients that stop sending are disconnected (adapters/http/serve.ts): a connection whose request
 * line, headers or body make no progress for CLIENT_TIMEOUT_SECONDS is closed, and headers
 * trickled in may take that long in all. A slow upload whose bytes keep coming, and a handler that
 * takes longer than the bound itself, are not cut. The app served as main.ts serves it, with a
 * one-second bound; every wait has a hang guard of ten times that.
 */
import assert from "node:assert/strict";
import { listen, type Listener } from "../adapters/http/mod.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, uploadForm } from "./_harness/images.ts";
import { limiterRow, WRONG_PASSWORD } from "./_harness/login.ts";

const BOUND_MS = 1_000;
const GUARD_MS = 10 * BOUND_MS;

const svc = await startService();
const auth = await authHeader(svc.app);
/** The app, and a route that answers only after longer than the bound. */
const server: Listener = await listen({
  port: 0,
  hostname: "127.0.0.1",
  clientTimeoutMs: BOUND_MS,
  handler: async (req, info) => {
    if (new URL(req.url).pathname !== "/slow-handler") return svc.app.fetch(req, info);
    await new Promise((r) => setTimeout(r, 2.5 * BOUND_MS));
    return new Response("done");
  },
});
Deno.test.afterAll(async () => {
  await server.close();
  await svc.close();
});

const encode = (s: string) => new TextEncoder().encode(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Connects, sends `parts` with `gapMs` between them, and reads until the server closes: what it
 * answered (text) and how long the connection lasted. Fails when it outlives the hang guard.
 */
async function exchange(parts: (string | Uint8Array)[], gapMs = 0) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  const started = performance.now();
  let guarded = false;
  const guard = setTimeout(() => {
    guarded = true;
    conn.close();
  }, GUARD_MS);
  const sending = (async () => {
    for (const [i, part] of parts.entries()) {
      if (i > 0) await sleep(gapMs);
      await conn.write(typeof part === "string" ? encode(part) : part);
    }
  })().catch(() => {}); // the server may close while we still send: that is the point
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of conn.readable) chunks.push(chunk);
  } catch { /* reset by the server, or closed by the guard */ }
  clearTimeout(guard);
  await sending;
  assert.equal(guarded, false, `still open after the ${GUARD_MS} ms hang guard`);
  const text = new TextDecoder().decode(
    chunks.reduce((a, c) => new Uint8Array([...a, ...c]), new Uint8Array()),
  );
  return { text, ms: performance.now() - started };
}

Deno.test("half a request line, then nothing: the connection is closed", async () => {
  const { text, ms } = await exchange(["GET /api/v1/hea"]);
  assert.ok(ms >= 0.9 * BOUND_MS, `closed after ${ms} ms, before the bound`);
  assert.doesNotMatch(text, /200 OK/);
});

Deno.test("half the headers, then nothing: the connection is closed", async () => {
  const { text } = await exchange(["GET /api/v1/tags HTTP/1.1\r\nHost: a\r\nAccept: app"]);
  assert.doesNotMatch(text, /200 OK/);
});

Deno.test("headers trickled in one by one are cut when they take longer than the bound in all", async () => {
  const headers = Array.from({ length: 12 }, (_, i) => `X-Pad-${i}: ${i}\r\n`);
  const { text } = await exchange(["GET /api/v1/tags HTTP/1.1\r\nHost: a\r\n", ...headers], 300);
  assert.doesNotMatch(text, /200 OK/);
});

/** A real upload's request: the head and the multipart body. */
async function uploadRequest(): Promise<{ head: string; body: Uint8Array }> {
  const form = new Response(uploadForm(await makeImage("png", 120, 80), ["slow"]));
  const body = new Uint8Array(await form.arrayBuffer());
  const head = "POST /api/v1/images HTTP/1.1\r\nHost: a\r\nConnection: close\r\n" +
    `Authorization: ${auth.authorization}\r\n` +
    `Content-Type: ${form.headers.get("content-type")}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return { head, body };
}

Deno.test("an upload whose body stops half-way is disconnected, and nothing is stored", async () => {
  const images = async () => (await svc.db.sql`select count(*)::int as n from images`)[0].n;
  const before = await images();
  const { head, body } = await uploadRequest();
  const { text } = await exchange([head + new TextDecoder().decode(body.subarray(0, 100))]);
  assert.doesNotMatch(text, /HTTP\/1\.1 20/);
  assert.equal(await images(), before);
});

Deno.test("a slow upload whose bytes keep coming is not cut, however long it takes", async () => {
  const { head, body } = await uploadRequest();
  // Eight slices, 0.6 bounds apart: 4.2 bounds in all, never a whole bound without a byte.
  const step = Math.ceil(body.length / 8);
  const slices = Array.from({ length: 8 }, (_, i) => body.subarray(i * step, (i + 1) * step));
  const { text, ms } = await exchange([head, ...slices], 0.6 * BOUND_MS);
  assert.ok(ms > 4 * BOUND_MS, `the upload took ${ms} ms`);
  assert.match(text, /^HTTP\/1\.1 201 /, text.slice(0, 200));
  assert.match(text, /"tags":\[\{"name":"slow"/);
});

Deno.test("a handler that takes longer than the bound is not cut", async () => {
  const { text } = await exchange([
    "GET /slow-handler HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  ]);
  assert.match(text, /^HTTP\/1\.1 200 [\s\S]*done$/);
});

Deno.test("the app sees the socket peer (the login limiter counts 127.0.0.1)", async () => {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: WRONG_PASSWORD }),
  });
  assert.equal(res.status, 401);
  await res.body?.cancel();
  assert.deepEqual(await limiterRow(svc, "127.0.0.1"), { failures: 1, locked: false });
});

Deno.test("a DELETE through the server reaches the app as a Request (Hono's body limit copies it)", async () => {
  const created = await fetch(`http://127.0.0.1:${server.port}/api/v1/images`, {
    method: "POST",
    headers: auth,
    body: uploadForm(await makeImage("png", 30, 20)),
  });
  assert.equal(created.status, 201);
  const { short_id } = await created.json();
  const url = `http://127.0.0.1:${server.port}/api/v1/images/${short_id}`;
  const deleted = await fetch(url, { method: "DELETE", headers: auth });
  assert.equal(deleted.status, 204, await deleted.text());
  const gone = await fetch(url, { method: "HEAD" });
  assert.equal(gone.status, 404);
});

Deno.test("CLIENT_TIMEOUT_SECONDS=0 serves with Deno.serve, which keeps a stalled request open", async () => {
  const plain = await listen({
    port: 0,
    hostname: "127.0.0.1",
    clientTimeoutMs: 0,
    handler: svc.app.fetch,
  });
  try {
    const res = await fetch(`http://127.0.0.1:${plain.port}/api/v1/tags`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    // Still open after three bounds: what the default's timeouts are there for.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: plain.port });
    await conn.write(encode("GET /api/v1/tags HTTP/1.1\r\nHost: a\r\nAccept: app"));
    const read = conn.read(new Uint8Array(1024));
    const outcome = await Promise.race([
      read.then(() => "closed"),
      sleep(3 * BOUND_MS).then(() => "open"),
    ]);
    conn.close();
    await read.catch(() => {});
    assert.equal(outcome, "open");
  } finally {
    await plain.close();
  }
});
