/**
 * The last line of defence (adapters/http/last_resort.ts): a dependency's rejection that nobody
 * handles, or an exception thrown from its callback, during a request, is logged with that
 * request's id and does not end the process; the service answers the next request as usual.
 */
import assert from "node:assert/strict";
import { createApp } from "../wiring/app.ts";
import { installLastResort } from "../adapters/http/mod.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

Deno.test("a dependency's stray rejection and exception are logged with the request id, never fatal", async () => {
  const svc = await startService({ env: { DELIVERY_CACHE_MB: "0" } });
  const uninstall = installLastResort(svc.services.log);
  try {
    const image = await (await upload(
      svc.app,
      await authHeader(svc.app),
      await makeImage("png", 8, 8),
    )).json();
    // A storage client with bugs of its own: a promise it never handles, and a throw from a
    // callback it queued. Neither reaches the request, which still gets its bytes.
    const real = svc.services.store;
    const buggy: ObjectStore = Object.assign(Object.create(real), {
      get: (...args: Parameters<ObjectStore["get"]>) => {
        Promise.reject(new Error("dependency rejection nobody handles"));
        queueMicrotask(() => {
          throw new Error("dependency exception from a callback");
        });
        return real.get(...args);
      },
    });
    const app = createApp({ ...svc.services, store: buggy });
    const res = await app.request(`/api/v1/images/${image.short_id}/file`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    const requestId = res.headers.get("x-request-id");
    await new Promise((r) => setTimeout(r, 50)); // rejections are reported after a turn
    for (
      const [msg, text] of [
        ["unhandled rejection", "dependency rejection nobody handles"],
        ["uncaught exception", "dependency exception from a callback"],
      ]
    ) {
      const line = svc.logs.map((l) => JSON.parse(l)).find((l) => l.msg === msg);
      assert.ok(line, `${msg} is logged`);
      assert.equal(line.level, "error");
      assert.equal(line.request_id, requestId, `${msg} carries the request id`);
      assert.equal(line.err.message, text);
    }
    // Still serving.
    const again = await app.request("/api/v1/images");
    assert.equal(again.status, 200);
    await again.body?.cancel();
  } finally {
    uninstall();
    await svc.close();
  }
});
