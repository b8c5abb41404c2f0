/**
 * B8: uploads per second of distinct 1-megapixel JPEGs at concurrency 4 (end to end through
 * the service, s3rver and PostgreSQL), against thumbnails per second of the same images through
 * a worker pool of the same size as the service's, at concurrency 4. The two alternate in
 * rounds, with the service running throughout (idle while the pool works).
 */
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { cpuMs } from "./_lib/machine.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { perS, x } from "./_lib/results.ts";
import { photoJpeg } from "../tests/_harness/photos.ts";
import { signIn, spawnBenchService, startBenchS3 } from "./_lib/service.ts";
import { upload } from "./_lib/uploads.ts";

const ROUNDS = 2;
const PER_ROUND = 40;
const IMAGES = ROUNDS * PER_ROUND;
const CONCURRENCY = 4;

/** Runs `fn` over `items` with `concurrency` loops; bounded by `maxMs`. */
export async function rate<T>(items: T[], maxMs: number, fn: (item: T) => Promise<boolean>) {
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
  return { done, failed, seconds };
}

if (import.meta.main) {
  await benchMain("B8", "upload rate of 1 MP JPEGs vs pool thumbnail rate", async (notes) => {
    const images: Uint8Array[] = [];
    for (let i = 0; i < IMAGES + 2; i++) images.push(await photoJpeg(1155, 866, 1000 + i));
    const [warm1, warm2, ...measured] = images;
    const db = await freshBenchDatabase();
    try {
      const s3 = await startBenchS3();
      const svc = await spawnBenchService(db.url, s3);
      const workers = svc.workers;
      const auth = await signIn(svc.base);
      for (const w of [warm1, warm2]) await (await upload(svc.base, auth, w)).arrayBuffer();
      const statuses = new Map<number, number>();
      const pids = [svc.pid, s3.pid(), Deno.pid];
      const uploadOne = async (bytes: Uint8Array) => {
        const res = await upload(svc.base, auth, bytes, ["bench"]);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        return res.status === 201;
      };
      const pool = await ThumbnailPool.start({ size: workers, maxPixels: 50_000_000 });
      const thumbOne = async (bytes: Uint8Array) => {
        await pool.thumbnail(bytes);
        return true;
      };
      // Rounds of uploads and of thumbnails of the same images alternate (ABBA), so a noisy
      // stretch of the shared host (steal) hits both sides of the ratio, not one.
      const up = { done: 0, seconds: 0, cpu: pids.map(() => 0) };
      const thumbs = { done: 0, seconds: 0, cpu: 0 };
      const rounds: string[] = [];
      try {
        await pool.thumbnail(warm1);
        for (let round = 0; round < ROUNDS; round++) {
          const batch = measured.slice(round * PER_ROUND, (round + 1) * PER_ROUND);
          const runUploads = async () => {
            const cpu0 = await Promise.all(pids.map(cpuMs));
            const r = await rate(batch, 60_000, uploadOne);
            const cpu1 = await Promise.all(pids.map(cpuMs));
            up.done += r.done;
            up.seconds += r.seconds;
            cpu1.forEach((v, i) => up.cpu[i] += v - cpu0[i]);
          };
          const runThumbs = async () => {
            const cpu0 = await cpuMs(Deno.pid);
            const r = await rate(batch, 60_000, thumbOne);
            thumbs.cpu += (await cpuMs(Deno.pid)) - cpu0;
            thumbs.done += r.done;
            thumbs.seconds += r.seconds;
          };
          const [upSeconds, thumbSeconds] = [up.seconds, thumbs.seconds];
          if (round % 2 === 0) await runUploads().then(runThumbs);
          else await runThumbs().then(runUploads);
          const upRound = batch.length / (up.seconds - upSeconds);
          const thumbRound = batch.length / (thumbs.seconds - thumbSeconds);
          rounds.push(
            `${x(upRound / thumbRound)} (${upRound.toFixed(1)} / ${thumbRound.toFixed(1)} per s)`,
          );
        }
      } finally {
        pool.close();
        await svc.stop();
      }
      const upRate = up.done / up.seconds;
      const thumbRate = thumbs.done / thumbs.seconds;
      const upCpu = up.cpu.map((v) => (v / up.done).toFixed(1)).join(" / ");
      const thumbCpu = thumbs.cpu / thumbs.done;
      notes.push(
        `${measured.length} distinct 1155x866 JPEGs (~${
          (measured[0].length / 1024).toFixed(0)
        } KiB) in ${ROUNDS} rounds of ${PER_ROUND}, uploads and thumbnails alternating; service and pool with ${workers} thumbnail worker(s) (the service default on ${navigator.hardwareConcurrency} cores); upload statuses ${
          [...statuses].map(([s, n]) => `${s}x${n}`).join(" ")
        }; uploads took ${up.seconds.toFixed(1)} s, thumbnails ${thumbs.seconds.toFixed(1)} s; ` +
          `ratio per round ${rounds.join(", ")}; ` +
          `CPU ms per upload (service / s3rver / load generator) ${upCpu}, ` +
          `per pool thumbnail ${thumbCpu.toFixed(1)} (all CPU of the bench process)`,
      );
      return [{
        metric: `uploads of 1 MP JPEGs, concurrency ${CONCURRENCY}`,
        value: perS(upRate, "uploads/s"),
        baseline: `pool thumbnails ${perS(thumbRate, "/s")}`,
        ratio: x(upRate / thumbRate),
        target: ">= 0.8x",
        met: upRate / thumbRate >= 0.8,
      }];
    } finally {
      await db.drop();
    }
  });
}
