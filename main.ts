/**
 * The whole service: config -> resources (database, storage) -> migrate -> thumbnail pool and
 * job queue -> app -> the HTTP server (adapters/http/serve.ts). SIGINT and SIGTERM stop accepting, let in-flight requests finish within a
 * bound, then close the pool, the database pool and the embedded PostgreSQL.
 */
import { createApp, ensureAssets } from "./wiring/app.ts";
import { migrate } from "./services/migrate.ts";
import { loadConfig } from "./adapters/config.ts";
import { listeningLine, orExit, say, startingLine } from "./adapters/startup.ts";
import { Logger } from "./adapters/log.ts";
import { openResources } from "./wiring/resources.ts";
import { ThumbnailPool } from "./adapters/thumbnails/pool.ts";
import { warmUploadPath } from "./services/upload/warm_up.ts";
import { lowerPixelThreads } from "./adapters/thumbnails/pixel_threads.ts";
import { startDeleteSweeper } from "./services/deleter.ts";
import { JobQueue } from "./adapters/jobs/mod.ts";
import { implicationsJob } from "./services/tags/implications.ts";
import { serveUntilSignal } from "./adapters/http/mod.ts";
import { phashBackfillKind } from "./services/similar/backfill.ts";
import { workRecognition } from "./services/captions/recognition.ts";
import { UploadState } from "./services/upload/state.ts";
import { raiseEventLoopPriority } from "./adapters/event_loop.ts";

const SHUTDOWN_GRACE_MS = 25_000;

async function main() {
  const given = await orExit(() => loadConfig());
  const log = new Logger(given.LOG_LEVEL);
  say(startingLine(given));
  // The embedded default fills in its database URL and generated credentials.
  const resources = await orExit(() => openResources(given, log));
  const config = resources.config;
  const { sql, probeSql, searchSql, store } = resources;
  // What the uploads share: the app ingests with it, recognition waits while it is busy.
  const uploads = new UploadState();
  await migrate(sql, store, { log: (msg, f) => log.info(msg, f) });

  // The job queue loads and checks its schema, and the upload path warms up, while the
  // thumbnail workers warm up.
  const [thumbnails, jobs, warm] = await Promise.all([
    ThumbnailPool.start({ size: config.THUMBNAIL_WORKERS, maxPixels: config.MAX_IMAGE_PIXELS }),
    JobQueue.start(config.DATABASE_URL!, log),
    warmUploadPath({ sql, store }),
  ]);
  log.info("thumbnail workers started", { workers: thumbnails.stats().workers });
  // Pixel work yields the cores to requests (adapters/thumbnails/pixel_threads.ts).
  const pixelThreads = lowerPixelThreads();
  log.info("upload path warmed up", { ...warm, ms: Math.round(warm.ms) });
  await jobs.work(implicationsJob(sql, log));
  const dev = Deno.args.includes("--dev");
  if (await ensureAssets(dev)) log.info("client assets built", { dev });
  const app = createApp(
    { config, sql, probeSql, searchSql, store, log, thumbnails, jobs, uploads },
    {
      dev,
    },
  );
  const stopSweeper = startDeleteSweeper(sql, store, log);
  await jobs.work(phashBackfillKind({ sql, store, thumbnails, jobs, log }));
  const stopReader = await workRecognition(jobs, {
    sql,
    store,
    log,
    thumbnails,
    uploads,
    maxPixels: config.MAX_IMAGE_PIXELS,
    workers: config.CAPTION_WORKERS,
  });
  // Everything that keeps its own priority (the database, the workers) is started: requests
  // first, where the system allows it (adapters/event_loop.ts).
  log.info("event loop priority", { nice: raiseEventLoopPriority() });

  await serveUntilSignal({
    port: config.PORT,
    hostname: config.HOST,
    clientTimeoutMs: config.CLIENT_TIMEOUT_SECONDS * 1000,
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
