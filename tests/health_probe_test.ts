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
  try {
    // Take every connection of the pool (10) with queries that run for 3 s (the statement timeout is 4 s).
    const busy = Array.from({ length: 10 }, () => sql`select pg_sleep(3)`.execute());
    await waitForSleepers(svc, 10);

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
    await Promise.all(busy);
  } finally {
    await svc.close();
  }
});

/** Waits (bounded) until `n` of the service's queries are sleeping in PostgreSQL. */
async function waitForSleepers(svc: Awaited<ReturnType<typeof startService>>, n: number) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [{ count }] = await svc.db.sql`
      select count(*)::int as count from pg_stat_activity
      where datname = current_database() and query like 'select pg_sleep(3)%'
        and state = 'active'`;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fewer than ${n} pooled queries sleeping after 10 s`);
}
