/**
 * Health checks the database on a connection of its own: a pool busy with a flood of requests is
 * not a database that is down, so health stays 200 while every pooled connection is taken.
 */
import assert from "node:assert/strict";
import { createApp } from "../wiring/app.ts";
import { startService } from "./_harness/app.ts";

Deno.test("health answers 200 while every connection of the service's pool is busy", async () => {
  const svc = await startService();
  const { sql } = svc.services;
  let release = () => {};
  const released = new Promise<void>((r) => release = r);
  try {
    // Take every connection of the pool (10), each in a transaction held open until the checks
    // are done: a window no machine's speed closes (queries of 3 s had ended before the second
    // check under a load average of 20; idle_in_transaction_session_timeout, 15 s, still bounds
    // a test that never releases them).
    const busy = Array.from({ length: 10 }, () =>
      sql.begin(async (tx) => {
        await tx`select 'held by the test' as held`;
        await released;
      }));
    await waitForHolders(svc, 10);

    const res = await svc.app.request("/api/v1/health");
    assert.deepEqual(await res.json(), {
      status: "ok",
      checks: { database: "ok", storage: "ok" },
    });
    assert.equal(res.status, 200);

    // The contrast: checked through the busy pool, the same database looks down.
    const { probeSql: _, ...withoutProbe } = svc.services;
    const pooled = await createApp(withoutProbe).request("/api/v1/health");
    assert.equal(pooled.status, 503);
    assert.equal((await pooled.json()).checks.database, "unavailable");
    release();
    await Promise.all(busy);
  } finally {
    release();
    await svc.close();
  }
});

/** Waits (bounded) until `n` of the service's connections hold the test's open transaction. */
async function waitForHolders(svc: Awaited<ReturnType<typeof startService>>, n: number) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [{ count }] = await svc.db.sql`
      select count(*)::int as count from pg_stat_activity
      where datname = current_database() and query like 'select ''held by the test''%'
        and state = 'idle in transaction'`;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${n} pooled connections held after 10 s`);
}
