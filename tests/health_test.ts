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
    assert.equal((await svc.app.request("/api/v1/health")).status, 200);
  } finally {
    await svc.close();
  }
});

Deno.test("GET /api/v1/health answers 503 naming the database when it is unreachable", async () => {
  const svc = await startService();
  // A port nothing listens on: connection refused.
  const sql = createSql("postgres://postgres@127.0.0.1:1/none");
  try {
    const app = createApp({ ...svc.services, sql });
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
