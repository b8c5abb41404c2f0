import assert from "node:assert/strict";
import { startService, type TestService } from "./_harness/app.ts";
import { HealthChecks } from "../api/health.ts";
import { createSql } from "../db/client.ts";
import { createApp } from "../wiring/app.ts";

Deno.test("GET /api/v1/health answers 200 when the database and storage answer", async () => {
  const svc = await startService();
  try {
    const res = await svc.app.request("/api/v1/health");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      status: "ok",
      checks: { database: "ok", storage: "ok" },
    });
  } finally {
    await svc.close();
  }
});

Deno.test("GET /api/v1/health answers 503 naming storage when the S3 server is down", async () => {
  const svc = await startService();
  try {
    await svc.s3.stop();
    const res = await svc.app.request("/api/v1/health");
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: "unavailable",
      checks: { database: "ok", storage: "unavailable" },
    });
    await svc.s3.restart();
    // Within a second the last result is reused; after it, the next check reports recovery.
    assert.equal(await healthWithin(svc.app, 200, 30_000), 200);
  } finally {
    await svc.close();
  }
});

async function healthWithin(
  app: { request: (p: string) => Response | Promise<Response> },
  want: number,
  ms: number,
) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await app.request("/api/v1/health");
    await res.body?.cancel();
    if (res.status === want || Date.now() > until) return res.status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A store whose check the test settles by hand, and a clock it moves by hand: the rules are
 * about the age of the last result, so no assertion here depends on how fast the machine is.
 */
function manualHarness(svc: TestService) {
  const clock = { now: 1_000_000 };
  const pending: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let checks = 0;
  const store = Object.create(svc.services.store, {
    check: {
      value: () => {
        checks++;
        return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
      },
    },
  });
  const health = new HealthChecks({ sql: svc.services.sql, store }, () => clock.now);
  return {
    clock,
    health,
    checks: () => checks,
    /** Settles the oldest running check: ok, or failing. */
    settle: (ok: boolean) => {
      const p = pending.shift();
      assert.ok(p, "a check is running");
      if (ok) p.resolve();
      else p.reject(new Error("storage down"));
    },
  };
}

/** `h` once a first check has passed: there is a last result, taken at `h.clock.now`. */
async function withLastResult(h: ReturnType<typeof manualHarness>) {
  const first = h.health.current();
  h.settle(true);
  await first;
  return h;
}

/** Whether `p` has settled once every timer due before `ms` from now has run. */
async function settledAfter(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(() => settled = true, () => settled = true);
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

const OK = { database: "ok", storage: "ok" };
const STORAGE_DOWN = { database: "ok", storage: "unavailable" };

Deno.test("health checks run once for concurrent probes and at most once a second", async () => {
  const svc = await startService();
  try {
    const h = manualHarness(svc);
    const first = Array.from({ length: 10 }, () => h.health.current());
    h.settle(true);
    assert.deepEqual(await Promise.all(first), Array(10).fill(OK));
    assert.equal(h.checks(), 1, "ten concurrent probes share one check");
    h.clock.now += 999;
    for (let i = 0; i < 5; i++) assert.deepEqual(await h.health.current(), OK);
    assert.equal(h.checks(), 1, "probes within a second reuse the last result");
    h.clock.now += 2;
    const later = h.health.current();
    assert.equal(h.checks(), 2, "a probe past the second starts a check");
    h.settle(true);
    assert.deepEqual(await later, OK);
    h.clock.now += 500;
    await h.health.current();
    assert.equal(h.checks(), 2, "the check it started counts from when it ended");
  } finally {
    await svc.close();
  }
});

Deno.test("a slow check does not hold a probe: it gets the last result while that is at most 5 s old", async () => {
  const svc = await startService();
  try {
    const h = await withLastResult(manualHarness(svc));
    h.clock.now += 5_000; // exactly 5 s old: still good enough to answer with
    const quick = h.health.current();
    // The check is still running (nothing settles it): the answer cannot have come from it.
    assert.equal(await settledAfter(quick, 100), true, "answered without the running check");
    assert.deepEqual(await quick, OK);
    assert.equal(h.checks(), 2);
    // Once the last result is past 5 s, a probe joins the running check and waits for it.
    h.clock.now += 1;
    const joined = h.health.current();
    h.settle(false);
    assert.deepEqual(await joined, STORAGE_DOWN);
    assert.equal(h.checks(), 2, "the probe joined the running check");
  } finally {
    await svc.close();
  }
});

Deno.test("a steady prober never waits: a result over 1 s old is refreshed behind its answer", async () => {
  const svc = await startService();
  try {
    const h = await withLastResult(manualHarness(svc));
    h.clock.now += 1_000;
    const probe = h.health.current();
    // Settled before any timer of 1 ms or more could fire: it did not wait for the check.
    assert.equal(await settledAfter(probe, 0), true, "answered at once");
    assert.deepEqual(await probe, OK);
    assert.equal(h.checks(), 2, "and started a check");
    h.clock.now += 10;
    assert.deepEqual(await h.health.current(), OK, "the last result while it runs");
    assert.equal(h.checks(), 2, "which later probes share");
    h.settle(false);
    // The check's database half is a real query: it ends when PostgreSQL answers. Until then
    // each probe has the last result at once; then the next has the new one (hang guard: 10 s).
    const until = Date.now() + 10_000;
    let seen = await h.health.current();
    while (seen.storage === "ok" && Date.now() < until) {
      assert.deepEqual(seen, OK, "the last result while the check ends");
      await new Promise((r) => setTimeout(r, 5));
      seen = await h.health.current();
    }
    assert.deepEqual(seen, STORAGE_DOWN, "the next probe has its result");
    assert.equal(h.checks(), 2, "no probe started another check");
  } finally {
    await svc.close();
  }
});

Deno.test("only a check's first 10 ms are waited for: later probes get the last result at once", async () => {
  const svc = await startService();
  try {
    const h = await withLastResult(manualHarness(svc));
    h.clock.now += 1_501; // past the age at which a result is answered without waiting
    const starter = h.health.current(); // starts a check, and may wait up to 10 ms for it
    h.clock.now += 10;
    const later = h.health.current();
    // Settled before any timer of 1 ms or more could fire: it did not wait at all.
    assert.equal(await settledAfter(later, 0), true, "answered at once");
    assert.deepEqual(await later, OK);
    assert.equal(h.checks(), 2, "one check running");
    h.settle(true);
    await starter; // the live result or the last, depending on this machine's speed
  } finally {
    await svc.close();
  }
});

Deno.test("a last result over 5 s old is never answered: the probe waits for the running check", async () => {
  const svc = await startService();
  try {
    const h = await withLastResult(manualHarness(svc));
    h.clock.now += 5_001;
    const waiting = h.health.current();
    // Far past the 10 ms a probe waits for a running check before it takes the last result.
    assert.equal(await settledAfter(waiting, 100), false, "it did not answer with the old result");
    h.settle(false);
    assert.deepEqual(await waiting, STORAGE_DOWN, "it answered with the live check");
  } finally {
    await svc.close();
  }
});

Deno.test("GET /api/v1/health answers 503 naming the database when it is unreachable", async () => {
  const svc = await startService();
  // A port nothing listens on: connection refused.
  const sql = createSql("postgres://postgres@127.0.0.1:1/none");
  try {
    const app = createApp({ ...svc.services, sql, probeSql: sql });
    const res = await app.request("/api/v1/health");
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: "unavailable",
      checks: { database: "unavailable", storage: "ok" },
    });
  } finally {
    await sql.end({ timeout: 0 });
    await svc.close();
  }
});

Deno.test("GET /api/v1/health says video is off without FFmpeg; the status stays ok", async () => {
  const svc = await startService({ env: { FFMPEG_PATH: "/nowhere/ffmpeg" } });
  try {
    const res = await svc.app.request("/api/v1/health");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      status: "ok",
      checks: { database: "ok", storage: "ok" },
      details: { video: "off" },
    });
  } finally {
    await svc.close();
  }
});
