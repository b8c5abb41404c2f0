import assert from "node:assert/strict";
import { startService } from "./_harness/app.ts";
import { createSql } from "../db/client.ts";
import { createApp } from "../app.ts";

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
    // A check slower than 10 ms answers with the last result; the next answers report recovery.
    assert.equal(await healthWithin(svc.app, 200, 3000), 200);
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

Deno.test("health checks run once for concurrent probes, at most once a second, and a slow check does not hold them", async () => {
  const svc = await startService();
  let checks = 0;
  let delay = 0;
  const store = svc.services.store;
  const slowStore = Object.create(store, {
    check: {
      value: async (signal?: AbortSignal) => {
        checks++;
        await new Promise((r) => setTimeout(r, delay));
        return await store.check(signal);
      },
    },
  });
  try {
    const app = createApp({ ...svc.services, store: slowStore });
    const first = await Promise.all(
      Array.from({ length: 10 }, () => app.request("/api/v1/health")),
    );
    assert.deepEqual(first.map((r) => r.status), Array(10).fill(200));
    assert.equal(checks, 1, "ten concurrent probes share one check");
    for (let i = 0; i < 5; i++) assert.equal((await app.request("/api/v1/health")).status, 200);
    assert.equal(checks, 1, "probes within a second reuse the last result");
    await new Promise((r) => setTimeout(r, 1100)); // past the second: the next probe checks
    delay = 400;
    const started = performance.now();
    const quick = await app.request("/api/v1/health");
    const ms = performance.now() - started;
    assert.equal(quick.status, 200, "the last result while the slow check runs");
    assert.ok(ms < 200, `answered in ${ms.toFixed(0)} ms, not after the 400 ms check`);
    assert.equal(checks, 2, "that probe started a new check");
    await new Promise((r) => setTimeout(r, 450)); // let the slow check finish
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
