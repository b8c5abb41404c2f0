/**
 * The whole service: config -> resources (database, storage) -> migrate -> thumbnail pool and
 * job queue -> app -> Deno.serve. SIGINT and SIGTERM stop accepting, let in-flight requests finish within a
 * bound, then close the pool, the database pool and the embedded PostgreSQL.
 */
import { createApp, ensureAssets } from "./app.ts";
import { migrate } from "./db/migrate.ts";
import { loadConfig } from "./lib/config.ts";
import { listeningLine, orExit, say, startingLine } from "./lib/startup.ts";
import { Logger } from "./lib/log.ts";
import { openResources } from "./lib/resources.ts";
import { ThumbnailPool } from "./lib/images/thumbnails/pool.ts";
import { warmUploadPath } from "./lib/images/warm_up.ts";
import { lowerPixelThreads } from "./lib/images/pixel_threads.ts";
import { startDeleteSweeper } from "./lib/deleter.ts";
import { JobQueue } from "./lib/jobs/mod.ts";
import { implicationsJob } from "./lib/tags/mod.ts";
import { serveUntilSignal } from "./lib/http/mod.ts";
import { phashBackfillKind } from "./lib/similar/backfill.ts";
import { workRecognition } from "./lib/text/jobs.ts";
import { raiseEventLoopPriority } from "./lib/event_loop.ts";

const SHUTDOWN_GRACE_MS = 25_000;

async function main() {
  const given = await orExit(() => loadConfig());
  const log = new Logger(given.LOG_LEVEL);
  say(startingLine(given));
  // The embedded default fills in its database URL and generated credentials.
  const resources = await orExit(() => openResources(given, log));
  const config = resources.config;
  const { sql, probeSql, searchSql, store } = resources;
  await migrate(sql, store, { log: (msg, f) => log.info(msg, f) });

  // The job queue loads and checks its schema, and the upload path warms up, while the
  // thumbnail workers warm up.
  const [thumbnails, jobs, warm] = await Promise.all([
    ThumbnailPool.start({ size: config.THUMBNAIL_WORKERS, maxPixels: config.MAX_IMAGE_PIXELS }),
    JobQueue.start(config.DATABASE_URL!, log),
    warmUploadPath({ sql, store }),
  ]);
  log.info("thumbnail workers started", { workers: thumbnails.stats().workers });
  // Pixel work yields the cores to requests (lib/images/pixel_threads.ts).
  const pixelThreads = lowerPixelThreads();
  log.info("upload path warmed up", { ...warm, ms: Math.round(warm.ms) });
  await jobs.work(implicationsJob(sql, log));
  const dev = Deno.args.includes("--dev");
  if (await ensureAssets(dev)) log.info("client assets built", { dev });
  const app = createApp({ config, sql, probeSql, searchSql, store, log, thumbnails, jobs }, {
    dev,
  });
  const stopSweeper = startDeleteSweeper(sql, store, log);
  await jobs.work(phashBackfillKind({ sql, store, thumbnails, jobs, log }));
  const stopReader = await workRecognition(jobs, {
    sql,
    store,
    log,
    thumbnails,
    maxPixels: config.MAX_IMAGE_PIXELS,
    workers: config.CAPTION_WORKERS,
  });
  // Everything that keeps its own priority (the database, the workers) is started: requests
  // first, where the system allows it (lib/event_loop.ts).
  log.info("event loop priority", { nice: raiseEventLoopPriority() });

  serveUntilSignal({
    port: config.PORT,
    hostname: config.HOST,
    log,
    handler: app.fetch,
    graceMs: SHUTDOWN_GRACE_MS,
    onListen: (addr) => say(listeningLine(addr, resources.signIn)),
    onStop: async () => {
      stopSweeper();
      // No job is taken from here on, then the reader stops: a reading in progress ends at once
      // (its job goes back to the queue untried) instead of holding the queue's graceful stop.
      await jobs.stopTaking();
      await stopReader();
      await jobs.stop();
      thumbnails.close();
      pixelThreads.stop();
      await resources.close();
    },
  });
}

if (import.meta.main) await main();
