import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import sharp from "sharp";
import {
  ThumbnailFailedError,
  ThumbnailPool,
  ThumbnailQueueFullError,
  ThumbnailTimeoutError,
  ThumbnailWorkerError,
} from "./pool.ts";
import { TEST_CRASH, TEST_HANG } from "./messages.ts";
import { makeThumbnail } from "./make_thumbnail.ts";

const MAX_PIXELS = 40_000_000;

async function jpeg(width: number, height: number): Promise<Uint8Array> {
  const create = { width, height, channels: 3 as const, background: "#48c" };
  return new Uint8Array(await sharp({ create }).jpeg().toBuffer());
}

const crash = new TextEncoder().encode(TEST_CRASH);
const hang = new TextEncoder().encode(TEST_HANG);

Deno.test("ThumbnailPool runs many jobs, never more at once than it has workers", async () => {
  using pool = await ThumbnailPool.start({ size: 2, maxPixels: MAX_PIXELS });
  deepEqual(pool.stats(), { workers: 2, busy: 0, queued: 0 });
  const inputs = await Promise.all(Array.from({ length: 24 }, (_, i) => jpeg(800 + i * 10, 600)));
  let maxBusy = 0;
  const sampler = setInterval(() => maxBusy = Math.max(maxBusy, pool.stats().busy), 1);
  try {
    const jobs = inputs.map((input) => pool.thumbnail(input));
    maxBusy = Math.max(maxBusy, pool.stats().busy);
    equal(pool.stats().queued, 22);
    const results = await Promise.all(jobs);
    results.forEach((thumb, i) => {
      equal(thumb.width, 400);
      equal(thumb.height, Math.round(600 * 400 / (800 + i * 10)));
    });
    equal((await sharp(results[0].data).metadata()).format, "webp");
  } finally {
    clearInterval(sampler);
  }
  equal(maxBusy, 2);
  deepEqual(pool.stats(), { workers: 2, busy: 0, queued: 0 });
});

Deno.test("ThumbnailPool leaves the caller's bytes intact", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS });
  const input = await jpeg(300, 200);
  const copy = input.slice();
  await pool.thumbnail(input.subarray(0));
  deepEqual(input, copy);
});

Deno.test("ThumbnailPool returns the worker's perceptual hash with the thumbnail", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS });
  // Shapes, not a plain colour: a plain picture has no hash.
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200">
    <rect width="300" height="200" fill="#fff"/><rect width="100" height="120" fill="#123"/>
    <circle cx="220" cy="130" r="50" fill="#c42"/></svg>`;
  const input = new Uint8Array(await sharp(new TextEncoder().encode(svg)).jpeg().toBuffer());
  const [pooled, direct] = await Promise.all([pool.thumbnail(input), makeThumbnail(input)]);
  equal(typeof pooled.phash, "bigint");
  equal(pooled.phash, direct.phash);
});

Deno.test("ThumbnailPool passes inputs larger and smaller than the worker's buffer whole", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS });
  // A PNG of noise over the 8 MiB buffer a worker starts with, then small JPEGs in the buffer it
  // hands back: each job must see exactly its own bytes, not what an earlier one left there.
  const raw = crypto.getRandomValues(new Uint8Array(65_536));
  const noise = new Uint8Array(1800 * 1700 * 3).map((_, i) => raw[i % 65_521]);
  const big = new Uint8Array(
    await sharp(noise, { raw: { width: 1800, height: 1700, channels: 3 } }).png({
      compressionLevel: 0,
    }).toBuffer(),
  );
  ok(big.length > 8 * 1024 * 1024, `${big.length} bytes`);
  const inputs = [await jpeg(600, 300), big, await jpeg(300, 600), big, await jpeg(500, 500)];
  const sizes = [[400, 200], [400, 378], [200, 400], [400, 378], [400, 400]];
  for (const [i, input] of inputs.entries()) {
    const thumb = await pool.thumbnail(input);
    deepEqual([thumb.width, thumb.height], sizes[i], `job ${i}`);
  }
});

Deno.test("ThumbnailPool rejects at once when the queue is full", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxQueue: 2, maxPixels: MAX_PIXELS });
  const input = await jpeg(1200, 900);
  const accepted = [pool.thumbnail(input), pool.thumbnail(input), pool.thumbnail(input)];
  deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 2 });
  await rejects(pool.thumbnail(input), ThumbnailQueueFullError);
  equal((await Promise.all(accepted)).length, 3);
  // Room again once the queue drains.
  equal((await pool.thumbnail(input)).width, 400);
});

Deno.test("ThumbnailPool drops an aborted job that is still queued", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS });
  const input = await jpeg(1200, 900);
  const running = new AbortController();
  const queued = new AbortController();
  const first = pool.thumbnail(input, running.signal);
  const second = pool.thumbnail(input, queued.signal);
  deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 1 });
  queued.abort(new Error("not needed"));
  running.abort(new Error("too late"));
  deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 0 });
  await rejects(second, /not needed/);
  equal((await first).width, 400, "a running job is not cut short");
});

Deno.test("ThumbnailPool reports a bad image without losing the worker", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: 1_000_000 });
  await rejects(pool.thumbnail(new TextEncoder().encode("<svg/>")), ThumbnailFailedError);
  await rejects(pool.thumbnail(await jpeg(2000, 1000)), /too large/);
  const whole = await jpeg(300, 200);
  await rejects(pool.thumbnail(whole.subarray(0, whole.length >> 1)), ThumbnailFailedError);
  equal((await pool.thumbnail(whole)).width, 300);
  deepEqual(pool.stats(), { workers: 1, busy: 0, queued: 0 });
});

Deno.test("ThumbnailPool fails the job of a crashed worker and replaces it", async () => {
  using pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS, testHooks: true });
  const input = await jpeg(640, 480);
  const crashed = pool.thumbnail(crash);
  const queued = pool.thumbnail(input);
  await rejects(crashed, ThumbnailWorkerError);
  equal((await queued).width, 400);
  equal((await pool.thumbnail(input)).height, 300);
  deepEqual(pool.stats(), { workers: 1, busy: 0, queued: 0 });
});

Deno.test("ThumbnailPool times out a hung worker and replaces it", async () => {
  // Long enough that the real thumbnail after the hang finishes within it on a loaded machine.
  const timeoutMs = 1_500;
  using pool = await ThumbnailPool.start({
    size: 1,
    timeoutMs,
    maxPixels: MAX_PIXELS,
    testHooks: true,
  });
  const started = performance.now();
  // Without the timeout the job would hang for ever; the guard turns that into a failure.
  let guard: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    guard = setTimeout(() => reject(new Error("the hung job never timed out")), 120_000);
  });
  try {
    await rejects(Promise.race([pool.thumbnail(hang), hung]), ThumbnailTimeoutError);
  } finally {
    clearTimeout(guard);
  }
  // A timer never fires early (a few ms of clock granularity aside): the job got its full time.
  const waited = performance.now() - started;
  ok(waited >= timeoutMs - 10, `timed out after ${waited} ms, before its ${timeoutMs} ms`);
  equal((await pool.thumbnail(await jpeg(640, 480))).width, 400);
  deepEqual(pool.stats(), { workers: 1, busy: 0, queued: 0 });
});

Deno.test("ThumbnailPool.close() rejects running and queued jobs", async () => {
  const pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS, testHooks: true });
  const input = await jpeg(640, 480);
  const pending = [pool.thumbnail(hang), pool.thumbnail(input), pool.thumbnail(input)];
  deepEqual(pool.stats(), { workers: 1, busy: 1, queued: 2 });
  pool.close();
  for (const job of pending) await rejects(job, ThumbnailWorkerError);
  deepEqual(pool.stats(), { workers: 0, busy: 0, queued: 0 });
  await rejects(pool.thumbnail(input), /closed/);
});

Deno.test("ThumbnailPool ignores test-hook inputs unless asked", async () => {
  using pool = await ThumbnailPool.start({ size: 1, timeoutMs: 2000, maxPixels: MAX_PIXELS });
  await rejects(pool.thumbnail(crash), ThumbnailFailedError);
  await rejects(pool.thumbnail(hang), ThumbnailFailedError);
});
