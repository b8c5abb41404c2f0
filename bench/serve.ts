/**
 * The service under benchmark, in its own process: built from the environment exactly as
 * main.ts builds it (config, resources, migrations, thumbnail pool, job queue, app), served with
 * Deno.serve on HOST:PORT (PORT=0 picks a free port). Prints `{"port": n}` on stdout once
 * listening; SIGTERM stops it. With BENCH_LOOP_FILE set, a 1 ms timer watches the event loop:
 * START_SIGNAL (bench/_signals.ts) starts a window, STOP_SIGNAL writes there its longest gap, the
 * most CPU time the main thread ran between two ticks (the longest it held the loop, whatever the
 * machine's load) and the gaps over 5 and 20 ms.
 */
import { createApp, ensureAssets } from "../wiring/app.ts";
import { migrate } from "../services/migrate.ts";
import { loadConfig } from "../adapters/config.ts";
import { Logger } from "../adapters/log.ts";
import { openResources } from "../wiring/resources.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { implicationsJob } from "../services/tags/implications.ts";
import { warmUploadPath } from "../services/upload/warm_up.ts";
import { lowerPixelThreads } from "../adapters/thumbnails/pixel_threads.ts";
import { workRecognition } from "../services/captions/recognition.ts";
import { UploadState } from "../services/upload/state.ts";
import { watchEventLoop } from "./_lib.ts";
import { START_SIGNAL, STOP_SIGNAL } from "./_signals.ts";
import { raiseEventLoopPriority } from "../adapters/event_loop.ts";

const log = new Logger(loadConfig().LOG_LEVEL);
const resources = await openResources(loadConfig(), log);
const { config, sql, probeSql, searchSql, store } = resources;
const uploads = new UploadState();
await migrate(sql, store);
// As main.ts does; BENCH_NO_WARMUP=1 leaves the upload path cold (B2's first-upload rows).
const [thumbnails] = await Promise.all([
  ThumbnailPool.start({ size: config.THUMBNAIL_WORKERS, maxPixels: config.MAX_IMAGE_PIXELS }),
  Deno.env.get("BENCH_NO_WARMUP") === "1" ? null : warmUploadPath({ sql, store }),
]);
const pixelThreads = lowerPixelThreads();
const jobs = await JobQueue.start(config.DATABASE_URL!, log);
await jobs.work(implicationsJob(sql, log));
// Caption recognition as in main.ts; BENCH_NO_OCR=1 leaves it out (before/after rows).
const stopReader = Deno.env.get("BENCH_NO_OCR") === "1"
  ? async () => {}
  : await workRecognition(jobs, {
    sql,
    store,
    log,
    thumbnails,
    uploads,
    maxPixels: config.MAX_IMAGE_PIXELS,
    workers: config.CAPTION_WORKERS,
  });
await ensureAssets();
const app = createApp({ config, sql, probeSql, searchSql, store, log, thumbnails, jobs, uploads });
// As main.ts does, once everything that keeps its own priority is started.
raiseEventLoopPriority();
const server = Deno.serve({
  port: config.PORT,
  hostname: config.HOST,
  onListen: ({ port }) => console.log(JSON.stringify({ port, workers: config.THUMBNAIL_WORKERS })),
}, app.fetch);

const loopFile = Deno.env.get("BENCH_LOOP_FILE");
if (loopFile) {
  let watch: ReturnType<typeof watchEventLoop> | null = null;
  Deno.addSignalListener(START_SIGNAL, () => {
    watch?.stop();
    watch = watchEventLoop();
  });
  Deno.addSignalListener(STOP_SIGNAL, () => {
    if (!watch) return;
    // Written beside it, then renamed: a reader polling for the file never sees half of it (a
    // test once parsed it mid-write and failed on "Unexpected end of JSON input").
    Deno.writeTextFileSync(`${loopFile}.part`, JSON.stringify(watch.stop()));
    Deno.renameSync(`${loopFile}.part`, loopFile);
    watch = null;
  });
}

Deno.addSignalListener("SIGTERM", async () => {
  await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 2000))]);
  thumbnails.close();
  pixelThreads.stop();
  await jobs.stopTaking();
  await stopReader();
  await jobs.stop(1000);
  await resources.close();
  Deno.exit(0);
});
