/**
 * B3: latency of GET /api/v1/health (one prober, back to back) while 20 uploads of 12 MP JPEGs
 * (distinct bytes each) run at once, against the same prober with no uploads.
 */
import {
  benchMain,
  cpuMs,
  freshDatabase,
  load,
  ms,
  photoJpeg,
  signIn,
  spawnReady,
  startS3Process,
  startService,
  upload,
  watchEventLoop,
  x,
} from "./_lib.ts";

const UPLOADS = 20;

if (import.meta.main) {
  await benchMain("B3", "health latency while 20 uploads of 12 MP JPEGs run", async (notes) => {
    const db = await freshDatabase();
    try {
      const s3 = await startS3Process();
      const svc = await startService(db.url, s3);
      const auth = await signIn(svc.base);
      await (await upload(svc.base, auth, await photoJpeg(640, 480, 1))).arrayBuffer();
      const health = () => fetch(`${svc.base}/api/v1/health`);

      // Two more probers tell where the time goes: a route that touches only PostgreSQL, and
      // s3rver itself (the health check's storage probe is a HeadBucket to it).
      const dbOnly = () => fetch(`${svc.base}/api/v1/tags?limit=1`);
      const s3Direct = () => fetch(`${s3.endpoint}/${s3.bucket}`, { method: "HEAD" });
      const probe = (until?: Promise<unknown>) =>
        Promise.all([health, dbOnly, s3Direct].map((fn) =>
          load(
            until
              ? { concurrency: 1, durationMs: 120_000, maxRequests: 100_000, until }
              : { concurrency: 1, durationMs: 5000, maxRequests: 20_000, warmup: 20 },
            fn,
          )
        ));
      const [idle, idleDb, idleS3] = await probe();

      // The uploads come from a process of their own: sending 100 MB from this one stalled its
      // event loop, and the probes' timers with it.
      const resultFile = await Deno.makeTempFile({ prefix: "bench-b3-" });
      const uploader = await spawnReady("bench/_upload_load.ts", {
        BASE: svc.base,
        AUTHORIZATION: auth.authorization,
        UPLOADS: String(UPLOADS),
        RESULT_FILE: resultFile,
      }, 120_000);
      const cpu0 = [await cpuMs(svc.pid), await cpuMs(s3.pid)];
      Deno.kill(uploader.pid, "SIGUSR1");
      const watch = watchEventLoop();
      const [busy, busyDb, busyS3] = await probe(uploader.exited);
      const ownGap = watch.stop();
      const cpu1 = [await cpuMs(svc.pid), await cpuMs(s3.pid)];
      const { statuses, ms: uploadMs } = JSON.parse(await Deno.readTextFile(resultFile)) as {
        statuses: number[];
        ms: number;
      };
      await Deno.remove(resultFile);
      const created = statuses.filter((s) => s === 201).length;
      notes.push(
        `${created}/${UPLOADS} uploads (from a separate process) answered 201 (others: ${
          statuses.filter((s) => s !== 201).join(",") || "none"
        }); all 20 took ${(uploadMs / 1000).toFixed(1)} s, using ${
          ((cpu1[0] - cpu0[0]) / 1000).toFixed(1)
        } s CPU in the service and ${((cpu1[1] - cpu0[1]) / 1000).toFixed(1)} s in s3rver; ` +
          `health probes: ${idle.requests} idle, ${busy.requests} during uploads ` +
          `(errors ${idle.errors}/${busy.errors}${
            busy.firstError ? `, first: ${busy.firstError}` : ""
          }); ` +
          `max during uploads ${ms(busy.max)}; longest event-loop gap of the load generator ` +
          `itself meanwhile ${ms(ownGap)}`,
        `same time, other probers (idle -> during uploads, p50/p99): /api/v1/tags?limit=1 (database only) ${
          ms(idleDb.p50)
        }/${ms(idleDb.p99)} -> ${ms(busyDb.p50)}/${ms(busyDb.p99)} (max ${ms(busyDb.max)}); ` +
          `HEAD bucket on s3rver directly ${ms(idleS3.p50)}/${ms(idleS3.p99)} -> ${
            ms(busyS3.p50)
          }/${ms(busyS3.p99)} (max ${ms(busyS3.max)})`,
      );
      // Which step blocks the service's event loop: each step of an upload on 20 bodies at
      // once, one step at a time, in a fresh process with the service's own modules.
      await svc.stop();
      const phases = await spawnReady<Record<string, { ms: number; gap: number }>>(
        "bench/_upload_phases.ts",
        { S3_ENDPOINT: s3.endpoint, S3_BUCKET: s3.bucket, PHASE_UPLOADS: String(UPLOADS) },
        120_000,
      );
      await phases.stop();
      notes.push(
        `the service's upload steps on ${UPLOADS} bodies at once, one step at a time ` +
          `(bench/_upload_phases.ts; wall time, then the longest stretch the event loop was ` +
          `blocked): ${
            Object.entries(phases.info).map(([k, v]) => `${k} ${ms(v.ms)}, gap ${ms(v.gap)}`)
              .join("; ")
          }`,
      );
      return [
        {
          metric: "health p50, 1 prober, during 20 concurrent 12 MP uploads",
          value: ms(busy.p50),
          baseline: `no uploads ${ms(idle.p50)}`,
          ratio: x(busy.p50 / idle.p50),
          target: "-",
          met: null,
        },
        {
          metric: "health p99, 1 prober, during 20 concurrent 12 MP uploads",
          value: ms(busy.p99),
          baseline: `no uploads ${ms(idle.p99)}`,
          ratio: x(busy.p99 / idle.p99),
          target: "p99 < 20 ms",
          met: busy.p99 < 20,
        },
      ];
    } finally {
      await db.drop();
    }
  });
}
