/**
 * B8: uploads per second of distinct 1-megapixel JPEGs at concurrency 4 (end to end through
 * the service, s3rver and PostgreSQL), against thumbnails per second of the same images through
 * a worker pool of the same size as the service's, at concurrency 4.
 */
import { ThumbnailPool } from "../lib/thumbnails/pool.ts";
import {
  benchMain,
  cpuMs,
  freshDatabase,
  perS,
  photoJpeg,
  signIn,
  startS3Process,
  startService,
  upload,
  x,
} from "./_lib.ts";

const IMAGES = 60;
const CONCURRENCY = 4;

/** Runs `fn` over `items` with `concurrency` loops; bounded by `maxMs`. */
async function rate<T>(items: T[], maxMs: number, fn: (item: T) => Promise<boolean>) {
  let next = 0;
  let done = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length && performance.now() - t0 < maxMs) {
      if (await fn(items[next++])) done++;
      else failed++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: done / seconds, done, failed, seconds };
}

if (import.meta.main) {
  await benchMain("B8", "upload rate of 1 MP JPEGs vs pool thumbnail rate", async (notes) => {
    const images: Uint8Array[] = [];
    for (let i = 0; i < IMAGES + 2; i++) images.push(await photoJpeg(1155, 866, 1000 + i));
    const [warm1, warm2, ...measured] = images;
    const db = await freshDatabase();
    try {
      const s3 = await startS3Process();
      const svc = await startService(db.url, s3);
      const workers = svc.workers;
      const auth = await signIn(svc.base);
      for (const w of [warm1, warm2]) await (await upload(svc.base, auth, w)).arrayBuffer();
      const statuses = new Map<number, number>();
      const pids = [svc.pid, s3.pid, Deno.pid];
      const cpu0 = await Promise.all(pids.map(cpuMs));
      const up = await rate(measured, 60_000, async (bytes) => {
        const res = await upload(svc.base, auth, bytes, ["bench"]);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        return res.status === 201;
      });
      const cpu1 = await Promise.all(pids.map(cpuMs));
      const upCpu = cpu1.map((v, i) => ((v - cpu0[i]) / up.done).toFixed(1)).join(" / ");
      await svc.stop();

      const pool = await ThumbnailPool.start({ size: workers, maxPixels: 50_000_000 });
      let thumbs;
      let thumbCpu = 0;
      try {
        await pool.thumbnail(warm1);
        const t0 = await cpuMs(Deno.pid);
        thumbs = await rate(measured, 60_000, async (bytes) => {
          await pool.thumbnail(bytes);
          return true;
        });
        thumbCpu = ((await cpuMs(Deno.pid)) - t0) / thumbs.done;
      } finally {
        pool.close();
      }
      notes.push(
        `${measured.length} distinct 1155x866 JPEGs (~${
          (measured[0].length / 1024).toFixed(0)
        } KiB); service and pool with ${workers} thumbnail worker(s) (the service default on ${navigator.hardwareConcurrency} cores); upload statuses ${
          [...statuses].map(([s, n]) => `${s}x${n}`).join(" ")
        }; uploads took ${up.seconds.toFixed(1)} s, thumbnails ${thumbs.seconds.toFixed(1)} s; ` +
          `CPU ms per upload (service / s3rver / load generator) ${upCpu}, ` +
          `per pool thumbnail ${thumbCpu.toFixed(1)} (all CPU of the bench process)`,
      );
      return [{
        metric: `uploads of 1 MP JPEGs, concurrency ${CONCURRENCY}`,
        value: perS(up.perSecond, "uploads/s"),
        baseline: `pool thumbnails ${perS(thumbs.perSecond, "/s")}`,
        ratio: x(up.perSecond / thumbs.perSecond),
        target: ">= 0.8x",
        met: up.perSecond / thumbs.perSecond >= 0.8,
      }];
    } finally {
      await db.drop();
    }
  });
}
