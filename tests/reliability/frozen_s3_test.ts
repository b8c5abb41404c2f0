/**
 * A hung S3: s3rver in its own process, frozen with SIGSTOP (connections are still accepted,
 * nothing answers, not even mid-body). With S3_TIMEOUT_SECONDS=1 every storage call gives up
 * after a second without progress: uploads and reads of uncached objects answer 503, health names
 * storage, and everything else keeps serving. After SIGCONT the service recovers by itself and,
 * once the sweeper has run, the bucket holds exactly the objects the tables name.
 */
import assert from "node:assert/strict";
import { insertImage } from "../../db/images.ts";
import { sweepPendingDeletes } from "../../services/deleter.ts";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import { disposeS3 } from "../_harness/s3.ts";
import { startS3Process } from "../_harness/s3_process.ts";
import { assertBucketMatchesTables } from "../_harness/consistency.ts";
import { sleep, within } from "../_harness/waits.ts";

/** Generous: the deadline is 1 s; this only tells an answer from a hang. */
const BOUND_MS = 10_000;

const s3 = await startS3Process({ timeoutMs: 1000 });
const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ s3, thumbnails: pool, env: { S3_TIMEOUT_SECONDS: "1" } });
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, svc.app.fetch);
const base = `http://127.0.0.1:${server.addr.port}`;
const auth = await authHeader(svc.app);

/** Uploads `bytes` through HTTP; the answer's status and body. */
async function uploadHttp(bytes: Uint8Array) {
  const form = new FormData();
  form.append("file", new File([bytes as BlobPart], "x.png"));
  const res = await fetch(`${base}/api/v1/images`, { method: "POST", headers: auth, body: form });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

// Before the outage: an image read once (so the delivery cache has it), one never read, and a
// 32 MB object (more than the sockets between S3, service and client can hold) with its row.
const cachedBytes = await makeImage("png", 50, 40);
const cached = await (await upload(svc.app, auth, cachedBytes)).json();
assert.equal((await svc.app.request(cached.file_url)).status, 200);
const uncachedBytes = await makeImage("png", 60, 40);
const uncached = await (await upload(svc.app, auth, uncachedBytes)).json();
const huge = new Uint8Array(32 * 1024 * 1024);
for (let at = 0; at < huge.length; at += 65536) {
  crypto.getRandomValues(huge.subarray(at, at + 65536));
}
const hugeId = "Huge0001";
await svc.s3.store.put(originalKey(hugeId), huge, {
  contentLength: huge.length,
  contentType: "image/png",
});
await insertImage(svc.db.sql, {
  shortId: hugeId,
  hash: "f".repeat(64),
  contentType: "image/png",
  sizeBytes: huge.length,
  width: 1,
  height: 1,
  thumbnailKey: null,
}, []);

// One test whose steps run in order (a shuffled run reorders tests, never steps): the outage,
// a read cut mid-body, then the recovery that the first two leave behind.
Deno.test("a frozen S3: the outage is answered, a stalled read is cut, the thaw heals", async (t) => {
  await t.step(
    "with S3 frozen, uploads and uncached reads answer 503 in bounded time, and the rest keeps serving",
    async () => {
      s3.freeze();
      try {
        const up = await within(uploadHttp(await makeImage("png", 70, 40)), BOUND_MS, "upload");
        assert.equal(up.status, 503);
        assert.ok(up.headers.get("retry-after"));
        assert.equal(typeof up.json.detail, "string");

        for (const path of [uncached.file_url, uncached.thumbnail_url]) {
          const res = await within(fetch(base + path), BOUND_MS, path);
          assert.equal(res.status, 503, path);
          assert.ok(res.headers.get("retry-after"), path);
          await res.body?.cancel();
        }

        const health = await within(fetch(`${base}/api/v1/health`), BOUND_MS, "health");
        assert.equal(health.status, 503);
        assert.deepEqual((await health.json()).checks, { database: "ok", storage: "unavailable" });

        // What needs no storage read answers as always.
        const fromCache = await within(fetch(base + cached.file_url), BOUND_MS, "cached file");
        assert.equal(fromCache.status, 200);
        assert.deepEqual(new Uint8Array(await fromCache.arrayBuffer()), cachedBytes);
        const head = await within(
          fetch(base + uncached.file_url, { method: "HEAD" }),
          BOUND_MS,
          "HEAD",
        );
        assert.equal(head.status, 200);
        assert.equal(head.headers.get("content-length"), String(uncachedBytes.length));
        for (
          const path of [
            "/api/v1/images",
            `/api/v1/images/${uncached.short_id}`,
            "/api/v1/tags",
            "/",
            `/i/${uncached.short_id}`,
          ]
        ) {
          const res = await within(fetch(base + path), BOUND_MS, path);
          assert.equal(res.status, 200, path);
          await res.body?.cancel();
        }

        // A delete removes the row at once; its objects wait for the sweeper.
        const del = await within(
          fetch(`${base}/api/v1/images/${cached.short_id}`, { method: "DELETE", headers: auth }),
          BOUND_MS,
          "delete",
        );
        assert.equal(del.status, 204);
        assert.equal((await svc.app.request(cached.file_url)).status, 404);

        // The sweeper gives up on the frozen storage in bounded time and backs off.
        const removed = await within(
          sweepPendingDeletes(svc.db.sql, svc.s3.store),
          BOUND_MS,
          "sweep",
        );
        assert.equal(removed, 0);
        const waiting = await svc.db.sql`select key from pending_deletes where attempts > 0`;
        assert.ok(waiting.length > 0, "a failed delete is deferred");
      } finally {
        s3.thaw();
      }
    },
  );

  /** Waits until health answers 200 again (the thawed s3rver first works off its backlog). */
  async function healthy() {
    const until = Date.now() + BOUND_MS;
    for (;;) {
      const res = await fetch(`${base}/api/v1/health`);
      await res.body?.cancel();
      if (res.status === 200) return;
      assert.ok(Date.now() < until, "health did not recover");
      await sleep(200);
    }
  }

  await t.step(
    "with S3 frozen mid-body, a streamed read is cut once no byte came for the deadline",
    async () => {
      await healthy();
      const res = await fetch(`${base}/api/v1/images/${hugeId}/file`);
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      let received = (await reader.read()).value?.length ?? 0;
      s3.freeze();
      try {
        const outcome = await within(
          (async () => {
            try {
              for (let r = await reader.read(); !r.done; r = await reader.read()) {
                received += r.value.length;
              }
              return "ended";
            } catch {
              return "failed";
            }
          })(),
          BOUND_MS,
          "the rest of the body",
        );
        assert.ok(
          outcome === "failed" || received < huge.length,
          `${outcome} after ${received} of ${huge.length} bytes`,
        );
      } finally {
        s3.thaw();
      }
    },
  );

  await t.step(
    "after SIGCONT the service recovers by itself, and the bucket matches the tables",
    async () => {
      await healthy();
      const again = await fetch(base + uncached.file_url);
      assert.equal(again.status, 200);
      assert.deepEqual(new Uint8Array(await again.arrayBuffer()), uncachedBytes);
      const up = await uploadHttp(await makeImage("png", 80, 40));
      assert.equal(up.status, 201);
      const big = await fetch(`${base}/api/v1/images/${hugeId}/file`);
      assert.equal((await big.arrayBuffer()).byteLength, huge.length);

      // The upload that failed kept its keys recorded: whatever of it reached the bucket after the
      // thaw is the sweeper's to remove.
      const failed = await svc.db.sql`select key from pending_deletes where attempts = 0`;
      assert.ok(
        failed.some((r) => /^images\//.test(r.key)),
        "the failed upload's keys are recorded",
      );
      await sleep(500); // let the thawed s3rver finish what it had buffered
      await assertBucketMatchesTables(svc);
    },
  );
});

Deno.test.afterAll(async () => {
  await server.shutdown();
  pool.close();
  await svc.close();
  await disposeS3(s3);
});
