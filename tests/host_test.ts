/**
 * The `Host` a request names is checked before anything routes it (adapters/http/host.ts, wired in
 * wiring/app_shell.ts): Deno builds the request URL from `Host` as given, so a `Host` carrying a path
 * moved the route. Over real sockets (Deno.serve of the app), since `app.request()` cannot send
 * such a header.
 */
import assert from "node:assert/strict";
import type { ImageDto } from "../domain/types.ts";
import { loadConfig } from "../adapters/config.ts";
import { hostProblem, parseHostHeader } from "../adapters/http/mod.ts";
import { createReaderApp } from "../reader.ts";
import { startService, withService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

const svc = await startService();
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, svc.app.fetch);
Deno.test.afterAll(async () => {
  await server.shutdown();
  await svc.close();
});
const auth = await authHeader(svc.app);

async function seed(): Promise<{ img: ImageDto; bytes: Uint8Array }> {
  const bytes = await makeImage("png", 40, 30);
  const res = await upload(svc.app, auth, bytes);
  assert.equal(res.status, 201, await res.clone().text());
  return { img: await res.json(), bytes };
}
const [a, b] = [await seed(), await seed()];

/** What came back for one raw HTTP/1.1 exchange: status, lower-cased headers and the body. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** Sends `head` (request line and headers, without the blank line) and reads until close. */
async function raw(head: string): Promise<RawAnswer> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  await conn.write(new TextEncoder().encode(`${head}\r\nConnection: close\r\n\r\n`));
  const chunks: Uint8Array[] = [];
  for await (const chunk of conn.readable) chunks.push(chunk);
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) all.set(c, (at += c.length) - c.length);
  const split = all.findIndex((_, i) =>
    all[i] === 13 && all[i + 1] === 10 && all[i + 2] === 13 && all[i + 3] === 10
  );
  const lines = new TextDecoder().decode(all.subarray(0, split)).split("\r\n");
  const headers = Object.fromEntries(
    lines.slice(1).map((l) => {
      const i = l.indexOf(":");
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
    }),
  );
  return { status: Number(lines[0].split(" ")[1]), headers, body: all.subarray(split + 4) };
}

const json = (body: Uint8Array) => JSON.parse(new TextDecoder().decode(body));

Deno.test("a Host that carries a path cannot change the route: 400, not the other image", async () => {
  const path = `/${a.img.short_id}.png`;
  const ok = await raw(`GET ${path} HTTP/1.1\r\nHost: board.example`);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, a.bytes);
  const forged = await raw(`GET ${path} HTTP/1.1\r\nHost: board.example/${b.img.short_id}.png?`);
  assert.equal(forged.status, 400);
  assert.equal(forged.headers["cache-control"], undefined, "nothing cacheable");
  assert.deepEqual(json(forged.body), {
    detail: "The Host header must be a host name or address with an optional port",
  });
});

Deno.test("a malformed Host is 400 on every kind of route, never 500", async () => {
  const paths = [`/i/${a.img.short_id}`, "/api/v1/images", `/${a.img.short_id}.png`, "/tags"];
  for (const host of ["a b", "[::1", "a#b", "u@a", "a:99999", "a\\b", "a%2fb", "", "é.example"]) {
    for (const path of paths) {
      const res = await raw(`GET ${path} HTTP/1.1\r\nHost: ${host}`);
      assert.equal(res.status, 400, `Host ${JSON.stringify(host)} on ${path}`);
      assert.match(json(res.body).detail, /Host header/);
    }
  }
});

Deno.test("the edge reader refuses the same Hosts", async () => {
  const reader = createReaderApp(svc.services);
  const get = (host: string) =>
    Promise.resolve(reader.request(`/${a.img.short_id}.png`, { headers: { host } }));
  const forged = await get(`board.example/${b.img.short_id}.png?`);
  assert.equal(forged.status, 400);
  assert.match((await forged.json()).detail, /Host header/);
  const ok = await get("board.example");
  assert.equal(ok.status, 200);
  assert.deepEqual(new Uint8Array(await ok.arrayBuffer()), a.bytes);
});

Deno.test("valid hosts, and HTTP/1.0 without Host, are served", async () => {
  for (const host of ["board.example", "board.example:8443", "127.0.0.1:8000", "[::1]:8000"]) {
    const res = await raw(`GET /${a.img.short_id}.png HTTP/1.1\r\nHost: ${host}`);
    assert.equal(res.status, 200, host);
    assert.deepEqual(res.body, a.bytes, host);
  }
  const old = await raw(`GET /api/v1/tags HTTP/1.0`);
  assert.equal(old.status, 200);
});

Deno.test("with ALLOWED_HOSTS, only the names listed are served, whatever the port", async () => {
  await withService({ ALLOWED_HOSTS: "Board.example, 127.0.0.1" }, async (svc) => {
    const get = (url: string) => svc.app.request(url, { headers: { host: new URL(url).host } });
    for (const url of ["http://board.example/api/v1/tags", "http://127.0.0.1:8000/api/v1/tags"]) {
      const res = await get(url);
      assert.equal(res.status, 200, url);
      await res.body?.cancel();
    }
    for (const url of ["http://other.example/api/v1/tags", "http://www.board.example/"]) {
      const res = await get(url);
      assert.equal(res.status, 400, url);
      assert.deepEqual(await res.json(), {
        detail: "This host is not served here (ALLOWED_HOSTS)",
      });
    }
  });
  assert.deepEqual(loadConfig({ ALLOWED_HOSTS: " a.example,[0::1] " }).ALLOWED_HOSTS, [
    "a.example",
    "[::1]",
  ]);
  for (const bad of ["a.example:80", "https://a.example", "a.example/x"]) {
    assert.throws(() => loadConfig({ ALLOWED_HOSTS: bad }), /ALLOWED_HOSTS: .*not a host name/);
  }
});

Deno.test("parseHostHeader() and hostProblem() on their own", () => {
  assert.equal(parseHostHeader("Board.Example.:443"), "board.example");
  assert.equal(parseHostHeader("[0:0::1]"), "[::1]");
  assert.equal(parseHostHeader("a:0"), null);
  assert.equal(parseHostHeader("-a.example"), null);
  assert.equal(parseHostHeader("[zz::1]"), null);
  // An absolute-form target names the host in the request line: that one is checked too.
  assert.equal(
    hostProblem("a", "http://a b/x"),
    "The request's host and path do not form a valid URL",
  );
  assert.equal(
    hostProblem(null, "http://other.example/x", ["a.example"]),
    "This host is not served here (ALLOWED_HOSTS)",
  );
});
