/**
 * The write side of a service, as wiring/service.ts's buildService() puts it together: the
 * embedded defaults, migrations, the thumbnail workers, the job queue and its job kinds, the
 * upload path, the delete sweeper and the whole app. The entries that write (main.ts,
 * bench/serve.ts, the tests' harness) give it as `writes`; the edge reader never loads it.
 */
import { lowerPixelThreads } from "../adapters/thumbnails/pixel_threads.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { raiseEventLoopPriority } from "../adapters/event_loop.ts";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { startDeleteSweeper } from "../services/deleter.ts";
import { migrate } from "../services/migrate.ts";
import { similarBackfillKind } from "../services/similar/backfill.ts";
import { implicationsJob } from "../services/tags/implications.ts";
import { videoBackfillKind, videoRenditionKind } from "../services/video_renditions.ts";
import { recognitionKind, workRecognition } from "../services/captions/recognition.ts";
import { UploadState } from "../services/upload/state.ts";
import { warmUploadPath } from "../services/upload/warm_up.ts";
import { openVideo } from "../adapters/video/open.ts";
import { createApp, ensureAssets } from "./app.ts";
import { openResources } from "./resources.ts";
import type { WriteSide } from "./service.ts";

/** The write side main.ts runs. */
export const writeSide: WriteSide = {
  openResources,
  migrate: (sql, store, log) =>
    migrate(sql, store, { log: (msg, fields) => log.info(msg, fields) }).then(() => {}),
  startThumbnails: (config) =>
    ThumbnailPool.start({ size: config.THUMBNAIL_WORKERS, maxPixels: config.MAX_IMAGE_PIXELS }),
  startJobs: (config, log, maxConnections) =>
    JobQueue.start(config.DATABASE_URL!, log, maxConnections ? { maxConnections } : {}),
  openVideo,
  warmUp: warmUploadPath,
  lowerPixelThreads,
  uploadState: () => new UploadState(),
  ensureAssets,
  createApp,
  workImplications: (jobs, { sql, log }) => jobs.work(implicationsJob(sql, log)),
  workVideoRenditions: async (jobs, { sql, store, log, video, config }) => {
    await jobs.work(videoRenditionKind({
      sql,
      store,
      log,
      video: video!,
      timeoutMs: config.VIDEO_RENDITION_TIMEOUT_SECONDS * 1000,
      maxSeconds: config.MAX_VIDEO_SECONDS,
    }));
    await jobs.work(videoBackfillKind({ sql, store, jobs, log }));
  },
  startDeleteSweeper: ({ sql, store, log }) => startDeleteSweeper(sql, store, log),
  workSimilarBackfill: (jobs, { sql, store, log }, thumbnails) =>
    jobs.work(similarBackfillKind({ sql, store, thumbnails, jobs, log })),
  workRecognition: async (jobs, { sql, store, log, config, uploads, video }, reader, pool) => {
    if (reader !== "engine") {
      // A given reader (tests): recognition jobs only, read at once.
      await jobs.work(
        recognitionKind({ sql, store, log, video, reader: () => Promise.resolve(reader) }),
      );
      return () => Promise.resolve();
    }
    return await workRecognition(jobs, {
      sql,
      store,
      log,
      uploads,
      video,
      thumbnails: pool ?? { stats: () => ({ queued: 0, busy: 0 }) },
      maxPixels: config.MAX_IMAGE_PIXELS,
      workers: config.CAPTION_WORKERS,
      idleMs: config.CAPTION_IDLE_SECONDS * 1000,
    });
  },
  raiseEventLoopPriority,
};
