/**
 * The service's pool (db/client.ts) and the patched postgres.js under it
 * (vendor/postgres/PATCHED.md): its settings, and the bounds on every wait.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Hono } from "hono";
import {
  createSearchSql,
  createSql,
  isDatabaseUnavailable,
  transaction,
  withGenericPlan,
} from "../db/client.ts";
import { onError } from "../api/errors.ts";
import type { AppEnv } from "../api/env.ts";
import { SIMILARITY_THRESHOLD } from "../domain/caption_text.ts";
import { freshDatabase, serverUrl } from "./_harness/db.ts";
import { youngSurvival } from "./_harness/gc_survival.ts";
import { loadConfig } from "../adapters/config.ts";
import { captureLogger } from "../adapters/log.ts";
import { openResources } from "../wiring/resources.ts";

Deno.test("the service's connections run with JIT off, name themselves, and time statements out", async () => {
  const sql = createSql(serverUrl());
  try {
    const [row] = await sql<Record<string, string>[]>`
      select current_setting('jit') as jit, current_setting('application_name') as app,
        current_setting('statement_timeout') as statement,
        current_setting('idle_in_transaction_session_timeout') as idle`;
    assert.deepEqual(row, { jit: "off", app: "reaction-board", statement: "4s", idle: "15s" });
    await assert.rejects(sql`select pg_sleep(5)`, (e) => {
      assert.equal((e as { code: string }).code, "57014");
      return isDatabaseUnavailable(e);
    });
  } finally {
    await sql.end();
  }
  // Operator work (seeding, set-up) runs without them.
  const unbounded = createSql(serverUrl(), { bounded: false });
  try {
    const [{ statement }] =
      await unbounded`select current_setting('statement_timeout') as statement`;
    assert.equal(statement, "0");
  } finally {
    await unbounded.end();
  }
});

// vendor/postgres/PATCHED.md, 6. Upstream's Query kept its resolve and reject as arrows made in
// its constructor; with them 27.6% of what this child allocated survived each scavenge (26 of
// them, 3 full collections, pauses up to 6.8 ms), with settler() 1.4% (136, none, 1.4 ms). No
// clock in the assertion: V8's own byte counts. The bound is ~10x the measured 1.4%, which a
// busy machine's collection timing does not reach and the arrows' 27.6% still fails.
Deno.test("a query's rows die young: under 14% of what the young generation allocates survives its collections", async () => {
  const gc = await youngSurvival(serverUrl(), 8000, 51);
  assert.ok(gc.scavenges > 10, `only ${gc.scavenges} scavenges: too few to judge`);
  assert.ok(
    gc.survived < 0.14,
    `${(100 * gc.survived).toFixed(1)}% of ${(gc.allocated / 1e6).toFixed(0)} MB survived ` +
      `${gc.scavenges} scavenges (${gc.markCompacts} full collections)`,
  );
});

Deno.test("withGenericPlan runs with generic plans: on a pool made for them without a transaction", async () => {
  const plain = createSql(serverUrl());
  const generic = createSql(serverUrl(), { genericPlans: true });
  // The pool made for generic plans, with begin() refused: the query must run as it is.
  const noBegin = new Proxy(generic, {
    get: (target, key) =>
      key === "begin"
        ? () => Promise.reject(new Error("began a transaction"))
        : Reflect.get(target, key),
  });
  const mode = (sql: Parameters<Parameters<typeof withGenericPlan>[1]>[0]) =>
    sql<{ mode: string }[]>`select current_setting('plan_cache_mode') as mode`;
  try {
    for (const sql of [noBegin, plain]) {
      assert.deepEqual([...await withGenericPlan(sql, mode)], [{ mode: "force_generic_plan" }]);
    }
    // On the plain pool the mode was set for that transaction only.
    assert.deepEqual([...await mode(plain)], [{ mode: "auto" }]);
  } finally {
    await plain.end();
    await generic.end();
  }
});

Deno.test("the search pool plans generically and gives pg_trgm the caption search's threshold", async () => {
  const sql = createSearchSql(serverUrl(), 2);
  try {
    const [row] = await sql<Record<string, string>[]>`
      select current_setting('plan_cache_mode') as mode,
        current_setting('pg_trgm.similarity_threshold') as threshold`;
    assert.deepEqual(row, { mode: "force_generic_plan", threshold: String(SIMILARITY_THRESHOLD) });
  } finally {
    await sql.end();
  }
});

Deno.test("the search pool runs at most SEARCH_CONNECTIONS statements at once; the rest wait their turn", async () => {
  const sql = createSearchSql(serverUrl(), 3);
  try {
    const rows = await Promise.all(
      Array.from({ length: 9 }, () =>
        sql<{ pid: number; started: Date }[]>`
          select pg_backend_pid() as pid, statement_timestamp() as started, pg_sleep(0.1)`),
    );
    assert.equal(new Set(rows.map(([r]) => r.pid)).size, 3);
    // Three rounds of three: the last statement started at least two sleeps after the first.
    const starts = rows.map(([r]) => r.started.getTime()).sort((a, b) => a - b);
    assert.ok(starts[8] - starts[0] >= 190, `started within ${starts[8] - starts[0]} ms`);
  } finally {
    await sql.end();
  }
});

Deno.test("the service's search pool has SEARCH_CONNECTIONS connections", async () => {
  const dataDir = await Deno.makeTempDir();
  const resources = await openResources(
    loadConfig({
      DATABASE_URL: serverUrl(),
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: "a password nobody uses",
      JWT_SECRET: "a secret of at least thirty-two bytes!!",
      SEARCH_CONNECTIONS: "3",
    }),
    captureLogger().log,
  );
  try {
    assert.equal(resources.searchSql.options.max, 3);
  } finally {
    await resources.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

/** A TCP proxy to the test server that lets each new connection through only after `delayMs`. */
function slowProxy(target: URL, delayMs: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const state = { letThrough: 0 };
  (async () => {
    for await (const client of listener) {
      conns.push(client);
      setTimeout(async () => {
        state.letThrough++;
        try {
          const server = await Deno.connect({
            hostname: target.hostname,
            port: Number(target.port || 5432),
          });
          conns.push(server);
          await Promise.all([
            client.readable.pipeTo(server.writable),
            server.readable.pipeTo(client.writable),
          ]);
        } catch { /* closed */ }
      }, delayMs);
    }
  })().catch(() => {});
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: url.toString(),
    /** How many connections the proxy has let through so far. */
    letThrough: () => state.letThrough,
    close: () => {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
    },
  };
}

Deno.test("queries past queue_timeout fail with QUEUE_TIMEOUT and never run, and the pool recovers", async () => {
  const db = await freshDatabase();
  await db.sql`create table side_effects (n int)`;
  // Connections take a second to open: a query waits for one, in the pool's queue or as the
  // first query of the connection being opened.
  const proxy = slowProxy(new URL(db.url), 1000);
  const sql = postgres(proxy.url, { max: 1, queue_timeout: 0.3, onnotice: () => {} });
  try {
    const results = await Promise.allSettled([
      sql`insert into side_effects values (1)`, // the connection's first query
      sql`insert into side_effects values (2)`, // queued behind it
    ]);
    // An order, not a duration: the 0.3 s queue timer is due before the proxy's 1 s one.
    assert.equal(proxy.letThrough(), 0, "both were rejected before the connection opened");
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.equal((r as PromiseRejectedResult).reason.code, "QUEUE_TIMEOUT");
      assert.ok(isDatabaseUnavailable((r as PromiseRejectedResult).reason));
    }
    // Once the connection is open it goes to the pool, and neither insert was ever sent.
    await new Promise((r) => setTimeout(r, 1200));
    assert.deepEqual([...await sql`select count(*)::int as n from side_effects`], [{ n: 0 }]);
  } finally {
    await sql.end({ timeout: 1 });
    proxy.close();
    await db.drop();
  }
});

Deno.test("a startup refusal after a socket error reaches the waiting query at once", async () => {
  // Upstream, what the dead socket left behind (its failed query, its unflushed write, a query
  // pipelined onto it after its error) made the queries after it wait forever (no
  // queue_timeout here, so only the fixes can answer).
  const db = await freshDatabase();
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  const sql = createSql(db.url, { max: 1, bounded: false });
  try {
    await sql`select 1`;
    await admin.unsafe(`alter database ${db.name} allow_connections false`);
    await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity
                        where datname = '${db.name}'`);
    // Each query at once after the last one failed, as a busy service would send them: the
    // first ones meet the dying socket, the next ones the refusal. Every one is answered.
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await Promise.race([
        sql`select 1`.then(() => "answered", (e) => e),
        new Promise((r) => setTimeout(() => r("hung"), 3000)),
      ]);
      assert.ok(isDatabaseUnavailable(answer), `#${i}: ${answer}`);
      codes.push((answer as { code: string }).code);
    }
    assert.deepEqual(codes.slice(-3), ["55000", "55000", "55000"], codes.join(" "));
  } finally {
    await admin.unsafe(`alter database ${db.name} allow_connections true`);
    await admin.end();
    await sql.end({ timeout: 1 });
    await db.drop();
  }
});

Deno.test("a write that deadlocks on every try is tried five times, then answers 503 with Retry-After", async () => {
  const sql = createSql(serverUrl());
  try {
    let tries = 0;
    const app = new Hono<AppEnv>();
    app.onError(onError);
    app.post("/write", async (c) => {
      await transaction(sql, async (tx) => {
        tries++;
        // The server's own deadlock error (40P01), as a lost race raises it.
        await tx`do $$ begin raise exception 'deadlock detected' using errcode = '40P01'; end $$`;
      });
      return c.json({});
    });
    const res = await app.request("/write", { method: "POST" });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "1");
    assert.deepEqual(await res.json(), { detail: "Concurrent changes conflicted, try again" });
    assert.equal(tries, 5);
  } finally {
    await sql.end();
  }
});
