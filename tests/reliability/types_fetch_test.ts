/**
 * A connection killed while postgres.js fetches its array types (the first query of a pool's
 * first connection) must not leave a rejected promise nobody handles: in main.ts that ends the
 * process. A proxy answers the driver's type query with the FATAL that pg_terminate_backend sends
 * (57P01) and closes; the query waiting on it fails like any query of a killed connection, and the next
 * succeeds with array types parsed. And the types are in place before a connection's first query
 * binds its arrays.
 */
import assert from "node:assert/strict";
import { createSql, retryRead } from "../../db/client.ts";
import { serverUrl } from "../_harness/db.ts";

/** PostgreSQL's ErrorResponse for a terminated backend. */
function fatalTerminated(): Uint8Array {
  const fields = "SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0";
  const body = new TextEncoder().encode(fields);
  const out = new Uint8Array(5 + body.length);
  out[0] = "E".charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

Deno.test("a connection killed during the driver's type fetch: no unhandled rejection, the retry succeeds", async () => {
  const target = new URL(serverUrl());
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let killed = 0;
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({
        hostname: target.hostname,
        port: Number(target.port || 5432),
      });
      const close = () =>
        [client, server].forEach((c) => {
          try {
            c.close();
          } catch { /* closed */ }
        });
      // Server to client as is.
      server.readable.pipeTo(client.writable).catch(close);
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        for (;;) {
          const n = await client.read(buf).catch(() => null);
          if (n === null) return close();
          const chunk = buf.subarray(0, n);
          if (killed === 0 && new TextDecoder().decode(chunk).includes("pg_catalog.pg_type")) {
            killed++;
            await client.write(fatalTerminated()).catch(() => {});
            return close();
          }
          await server.write(chunk).catch(close);
        }
      })();
    }
  })().catch(() => {});

  const unhandled: unknown[] = [];
  const onUnhandled = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    unhandled.push(e.reason);
  };
  addEventListener("unhandledrejection", onUnhandled);
  const url = new URL(serverUrl());
  url.hostname = "127.0.0.1";
  url.port = String((listener.addr as Deno.NetAddr).port);
  const sql = createSql(url.toString(), { max: 1 });
  try {
    // The query waiting on that connection fails as any query of a killed connection does
    // (503 for a write; a read retries once on a fresh connection, as here).
    const [row] = await retryRead(() => sql<{ n: number }[]>`select 41 + 1 as n`);
    assert.equal(row.n, 42);
    const [arr] = await sql<{ a: string[] }[]>`select array['x', 'y'] as a`;
    assert.deepEqual(arr.a, ["x", "y"], "array types were fetched on the fresh connection");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(killed, 1, "the type fetch was killed once");
    assert.deepEqual(unhandled.map(String), []);
  } finally {
    removeEventListener("unhandledrejection", onUnhandled);
    await sql.end({ timeout: 1 });
    listener.close();
  }
});

Deno.test("a fresh connection's first query binds its arrays with the fetched array types", async () => {
  // The types arrive in a continuation a few microtasks after their answer; on Deno the first
  // query's own answer was sometimes handled before it, so an array was sent as plain text
  // ("malformed array literal"): 46 of 300 fresh connections with both cores busy. A statement
  // over 1 KiB is written at once rather than on the next turn, as the listing statements are.
  // Two busy threads, stopped by a shared flag: terminate() does not stop a thread in a busy loop
  // (denoland/deno#35657), and two left spinning starved the rest of the suite in CI.
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const spin = URL.createObjectURL(
    new Blob(["onmessage = (e) => { while (Atomics.load(e.data, 0) === 0); close(); };"], {
      type: "text/javascript",
    }),
  );
  const spinners = [0, 1].map(() => new Worker(spin, { type: "module" }));
  for (const w of spinners) w.postMessage(stop);
  const wide = `/* ${"x".repeat(1100)} */`;
  let failures = 0;
  try {
    for (let i = 0; i < 150; i++) {
      const sql = createSql(serverUrl(), { max: 1 });
      try {
        const [row] = await sql<{ n: number }[]>`
          select ${i}::int as n ${sql.unsafe(wide)} where 'a' <> all(${["b", "c"]}::text[])`;
        assert.equal(row.n, i);
      } catch (e) {
        failures++;
        assert.match(String(e), /malformed array literal/);
      } finally {
        await sql.end({ timeout: 1 });
      }
    }
  } finally {
    Atomics.store(stop, 0, 1);
    spinners.forEach((w) => w.terminate());
    URL.revokeObjectURL(spin);
  }
  assert.equal(failures, 0, `${failures} of 150 first queries lost their array types`);
});
