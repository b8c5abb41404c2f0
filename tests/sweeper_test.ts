/**
 * The delete sweeper (services/deleter.ts) on PostgreSQL and s3rver: its timer, its back-off after a
 * storage failure, two sweepers at once (each key deleted once, no transaction or pooled
 * connection held while storage works), and the README's promise that a crash after an upload's
 * original was stored leaves a record the sweeper acts on.
 */
import assert from "node:assert/strict";
import { createSql, type Sql } from "../db/client.ts";
import { scheduleDeletes } from "../db/pending_deletes.ts";
import { startDeleteSweeper, sweepPendingDeletes } from "../services/deleter.ts";
import { captureLogger } from "../adapters/log.ts";
import { type ObjectStore, StorageError } from "../adapters/storage/mod.ts";
import { startService, TEST_PASSWORD } from "./_harness/app.ts";
import { makeImage, uploadForm } from "./_harness/images.ts";
import { childEnv, spawnService, startArgs } from "./_harness/child.ts";
import { sleep, within } from "./_harness/waits.ts";

const svc = await startService();
const { sql } = svc.db;
const store = svc.s3.store;
const { log } = captureLogger("error");

/** Stores a small object at each key and records the keys as due now. */
async function dueObjects(keys: string[]) {
  const data = new TextEncoder().encode("x");
  await Promise.all(keys.map((k) => store.put(k, data, { contentLength: 1, contentType: "x/y" })));
  await scheduleDeletes(sql, keys, 0);
}

const exists = async (key: string) => (await store.head(key)) !== null;
const recorded = async (key: string) =>
  (await sql`select 1 from pending_deletes where key = ${key}`).length > 0;

/** Polls `check` every 50 ms until it holds; fails after `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number, what: string) {
  const until = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < until, `${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** The store, with deletes that fail while `failing` is set, and every delete counted by key. */
function flaky(inner: ObjectStore, before?: (key: string) => Promise<void>) {
  const deletes = new Map<string, number>();
  const wrapped = {
    failing: false,
    deletes,
    store: {
      ...Object.fromEntries(
        (["put", "get", "head", "copy", "list", "check"] as const).map((m) => [
          m,
          (inner[m] as (...a: unknown[]) => unknown).bind(inner),
        ]),
      ),
      delete: async (key: string) => {
        deletes.set(key, (deletes.get(key) ?? 0) + 1);
        await before?.(key);
        if (wrapped.failing) throw new StorageError("storage is down (test)");
        await inner.delete(key);
      },
    } as ObjectStore,
  };
  return wrapped;
}

/** Seconds until the key's next attempt, and its attempts. */
async function backoffOf(key: string) {
  const [row] = await sql<{ wait: number; attempts: number }[]>`
    select extract(epoch from next_attempt_at - now())::float8 as wait, attempts
    from pending_deletes where key = ${key}`;
  return row;
}

Deno.test("the sweeper's timer sweeps due keys at its interval until stopped", async () => {
  await dueObjects(["images/Tim00001"]);
  const stop = startDeleteSweeper(sql, store, log, 100);
  try {
    await eventually(async () => !(await exists("images/Tim00001")), 10_000, "first sweep");
    await eventually(async () => !(await recorded("images/Tim00001")), 10_000, "record cleared");
    // It keeps going: a key due later is swept by a later tick.
    await dueObjects(["images/Tim00002"]);
    await eventually(async () => !(await exists("images/Tim00002")), 10_000, "a later sweep");
  } finally {
    await stop();
  }
  await dueObjects(["images/Tim00003"]);
  await sleep(1000); // ten intervals
  assert.ok(await exists("images/Tim00003"), "no sweep after stop");
  assert.ok(await recorded("images/Tim00003"));
  await sweepPendingDeletes(sql, store);
});

Deno.test("a failed delete waits its back-off (1 s, 2 s, 4 s ... at most 10 min), then succeeds", async () => {
  const f = flaky(store);
  f.failing = true;
  const key = "images/Bck00001";
  await dueObjects([key]);
  for (const [attempts, wait] of [[1, 1], [2, 2], [3, 4]]) {
    assert.equal(await sweepPendingDeletes(sql, f.store), 0);
    const got = await backoffOf(key);
    assert.equal(got.attempts, attempts);
    assert.ok(got.wait > wait - 0.5 && got.wait <= wait, `waits ${got.wait} s, not ${wait}`);
    // Not due yet: a sweep now leaves it alone.
    const tried = f.deletes.get(key);
    await sweepPendingDeletes(sql, f.store);
    assert.equal(f.deletes.get(key), tried, "not retried before its back-off");
    await sql`update pending_deletes set next_attempt_at = now() where key = ${key}`;
  }
  await sql`update pending_deletes set attempts = 30 where key = ${key}`;
  await sweepPendingDeletes(sql, f.store);
  assert.ok((await backoffOf(key)).wait > 590, "capped at ten minutes");

  f.failing = false;
  await sql`update pending_deletes set next_attempt_at = now() where key = ${key}`;
  assert.equal(await sweepPendingDeletes(sql, f.store), 1);
  assert.equal(await exists(key), false);
  assert.equal(await recorded(key), false);
});

Deno.test("after a failure a sweep starts no more deletes; the untried keys stay due", async () => {
  const f = flaky(store);
  f.failing = true;
  const keys = Array.from({ length: 40 }, (_, i) => `images/Stp${String(i).padStart(5, "0")}`);
  await dueObjects(keys);
  await sweepPendingDeletes(sql, f.store);
  const tried = f.deletes.size;
  assert.ok(tried >= 1 && tried <= 8, `${tried} deletes tried against failing storage`);
  const rows = await sql<{ attempts: number; due: boolean }[]>`
    select attempts, next_attempt_at <= now() as due from pending_deletes
    where key = any(${keys}::text[])`;
  assert.equal(rows.filter((r) => r.attempts === 1 && !r.due).length, tried, "tried: backing off");
  assert.equal(rows.filter((r) => r.attempts === 0 && r.due).length, 40 - tried, "untried: due");
  f.failing = false;
  await sql`update pending_deletes set next_attempt_at = now()`;
  assert.equal(await sweepPendingDeletes(sql, f.store), 40);
});

Deno.test("two sweepers at once delete each key once and hold no transaction or connection meanwhile", async () => {
  const keys = Array.from({ length: 150 }, (_, i) => `images/Two${String(i).padStart(5, "0")}`);
  await dueObjects(keys);
  // Each sweeper on a pool of one connection, as two replicas would be.
  const pools: Sql[] = [createSql(svc.db.url, { max: 1 }), createSql(svc.db.url, { max: 1 })];
  let started = 0;
  let bothStarted = () => {};
  const overlap = new Promise<void>((r) => bothStarted = r);
  const deleted = new Map<string, number>();
  // A check that fails inside a delete would count as a failed delete (retried later), so each
  // is recorded and reported as itself.
  const broken: string[] = [];
  const sweepers = pools.map((pool, i) => {
    let first = true;
    return flaky(store, async (key) => {
      deleted.set(key, (deleted.get(key) ?? 0) + 1);
      try {
        if (first) {
          // Neither goes on until both hold a lease: the two really sweep at once.
          first = false;
          if (++started === 2) bothStarted();
          await within(overlap, 30_000, `sweeper ${i} waiting for the other`);
        }
        // While storage works, the sweeper's only connection is free and nothing is in a
        // transaction.
        await within(pool`select 1`, 30_000, `sweeper ${i}'s own pool`);
        const open = await sql<{ state: string; query: string }[]>`
          select state, query from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`;
        assert.deepEqual([...open], [], "a transaction is open while storage works");
      } catch (e) {
        broken.push(`${key}: ${e}`);
        throw e;
      }
    });
  });
  try {
    const removed = await Promise.all(
      sweepers.map((s, i) => sweepPendingDeletes(pools[i], s.store)),
    );
    assert.deepEqual(broken, []);
    assert.equal(removed[0] + removed[1], 150);
    assert.ok(removed[0] > 0 && removed[1] > 0, `each swept some: ${removed}`);
    assert.deepEqual([...deleted.values()].filter((n) => n !== 1), [], "a key deleted twice");
    assert.equal(deleted.size, 150);
    assert.deepEqual(await Array.fromAsync(store.list("images/Two")), []);
    assert.deepEqual([...await sql`select key from pending_deletes`], []);
  } finally {
    await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
  }
});

Deno.test("a crash after an upload's original is stored leaves a record the sweeper acts on once its guard passes", async () => {
  const child = await spawnService(
    await startArgs("tests/_harness/stalled_upload_service.ts"),
    childEnv(svc.db, svc.s3),
  );
  const before = new Set(await Array.fromAsync(store.list("images/")));
  let original: string | undefined;
  try {
    // The upload stores its original, then waits for a thumbnail that never comes.
    const pending = fetch(`${child.base}/api/v1/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${await tokenFrom(child.base)}` },
      body: uploadForm(await makeImage("png", 30, 30)),
    }).then((r) => r.body?.cancel(), () => {});
    await eventually(
      async () => {
        original = (await Array.fromAsync(store.list("images/"))).find((k) => !before.has(k));
        return original !== undefined;
      },
      20_000,
      "the original stored",
    );
    Deno.kill(child.pid, "SIGKILL");
    await child.status;
    await pending;
  } finally {
    await child.stop();
  }
  const id = original!.slice("images/".length);
  assert.deepEqual([...await sql`select 1 from images where short_id = ${id}`], [], "no row");
  const [record] = await sql<{ wait: number }[]>`
    select extract(epoch from next_attempt_at - now())::float8 as wait
    from pending_deletes where key = ${original!}`;
  assert.ok(record && record.wait > 3000, "recorded, guarded for about an hour");

  // While the guard holds (an upload may still be writing its row), a sweep leaves it.
  await sweepPendingDeletes(sql, store);
  assert.ok(await exists(original!));
  // Once it has passed, the sweep removes the orphan and its record.
  await sql`update pending_deletes set next_attempt_at = now() where key like ${`%${id}%`}`;
  await sweepPendingDeletes(sql, store);
  assert.equal(await exists(original!), false);
  assert.deepEqual([...await sql`select key from pending_deletes where key like ${`%${id}%`}`], []);
});

/** A bearer token from the service at `base`. */
async function tokenFrom(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: TEST_PASSWORD }),
  });
  return (await res.json()).access_token;
}

Deno.test.afterAll(async () => {
  await svc.close();
});
