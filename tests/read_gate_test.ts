/**
 * The near-duplicate searches go through the read gate under the client's address
 * (adapters/http/read_gate.ts): over its share a client gets 429 `too_many_reads` with
 * `Retry-After`, and with every slot taken a search waits, then gets 503 `reads_busy`.
 */
import assert from "node:assert/strict";
import { ReadGate } from "../adapters/http/read_gate.ts";
import { Hono } from "hono";
import type { AppEnv } from "../api/env.ts";
import { onError } from "../api/errors.ts";
import { similarRoutes } from "../api/similar.ts";
import { startService } from "./_harness/app.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());

Deno.test("/duplicates and /similar answer 429, then 503, when the gate is full", async () => {
  const gate = new ReadGate({ max: 1, perAddress: 1, waitMs: 50, queue: 4 });
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.route("/", similarRoutes(svc.services, gate));
  // app.request() has no socket peer: the address is "unknown", as the gate counts it.
  const slot = await gate.enter("unknown");
  for (const path of ["/duplicates", "/images/aaaaaaaa/similar"]) {
    const res = await app.request(path);
    assert.equal(res.status, 429, path);
    assert.equal(res.headers.get("retry-after"), "1");
    assert.equal((await res.json()).code, "too_many_reads");
  }
  slot[Symbol.dispose]();
  const other = await gate.enter("203.0.113.9");
  const busy = await app.request("/duplicates");
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "2");
  assert.equal((await busy.json()).code, "reads_busy");
  other[Symbol.dispose]();
  const ok = await app.request("/duplicates");
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { items: [] });
  assert.deepEqual(gate.stats, { held: 0, waiting: 0, addresses: 0 });
});
