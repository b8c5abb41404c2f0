/**
 * The one place that puts a service together: configuration -> resources (database pools,
 * object store) -> migrations -> thumbnail workers, job queue and the upload path's warm-up ->
 * the app -> background work (implications, the delete sweeper, the perceptual-hash backfill,
 * caption recognition) -> priorities. main.ts, reader.ts, bench/serve.ts and the tests' harness
 * all call buildService(); the switches say what a caller leaves out.
 *
 * This module loads the read side only. The write side (the whole API, uploads, thumbnails,
 * migrations, the embedded database, the job kinds) is `writes`, wiring/write_side.ts, given by
 * the callers that write: without it the service only reads, and the edge reader, which gives
 * none, never loads the write path (tests/reader_test.ts walks its module graph).
 */
import type { Config } from "../adapters/config.ts";
import type { JobQueue } from "../adapters/jobs/mod.ts";
import { Logger } from "../adapters/log.ts";
import type { SignIn } from "../adapters/startup.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { s3Settings, S3Store } from "../adapters/storage/s3.ts";
import { createSearchSql, createSql, type Sql } from "../db/client.ts";
import type { CaptionReading, Services, Thumbnailer, VideoTool } from "../services/deps.ts";
import type { UploadState } from "../services/upload/state.ts";
import type { createShell } from "./app_shell.ts";
import { createReaderApp } from "./read_app.ts";

/** The app a service serves. */
export type App = ReturnType<typeof createShell>;

/** What a service runs on; `close` releases it. */
export interface Resources {
  /** The configuration, with what the resources filled in (the embedded database's URL). */
  config: Config;
  sql: Sql;
  /** The health check's own single connection (Services.probeSql). */
  probeSql: Sql;
  /** Generic plans for the autocomplete and the caption search (Services.searchSql). */
  searchSql: Sql;
  store: ObjectStore;
  /** How to sign in: the generated password only when the embedded default made it. */
  signIn: SignIn;
  close(): Promise<void>;
}

/** The thumbnail worker pool, as the wiring sees it. */
export interface ThumbnailWorkers extends Thumbnailer {
  stats(): { workers: number; busy: number; queued: number };
  close(): void;
}

/** The write side's parts, in the order buildService() uses them (wiring/write_side.ts). */
export interface WriteSide {
  /** The configured database and store, or the embedded defaults under DATA_DIR. */
  openResources(config: Config, log: Logger): Promise<Resources>;
  migrate(sql: Sql, store: ObjectStore, log: Logger): Promise<void>;
  startThumbnails(config: Config): Promise<ThumbnailWorkers>;
  startJobs(config: Config, log: Logger, maxConnections?: number): Promise<JobQueue>;
  /** FFmpeg as FFMPEG_PATH says, or null (logged) when it is not there. */
  openVideo(config: Config, log: Logger): Promise<VideoTool | null>;
  warmUp(services: Pick<Services, "sql" | "store">): Promise<{ ms: number }>;
  /** Lowers libvips' threads below the event loop's; returns what stops it. */
  lowerPixelThreads(): { stop(): void };
  uploadState(): UploadState;
  ensureAssets(dev: boolean): Promise<boolean>;
  createApp(services: Services, opts: { assetsDir?: string; dev?: boolean }): App;
  workImplications(jobs: JobQueue, services: Services): Promise<void>;
  /** Works the MP4 renditions of moving images (only with FFmpeg). */
  workVideoRenditions(jobs: JobQueue, services: Services): Promise<void>;
  /** Starts the sweeper of pending deletes; returns what stops it. */
  startDeleteSweeper(services: Services): () => unknown;
  workSimilarBackfill(jobs: JobQueue, services: Services, thumbnails: Thumbnailer): Promise<void>;
  /** Works caption recognition; returns what stops the recogniser once no job is taken. */
  workRecognition(
    jobs: JobQueue,
    services: Services,
    reader: "engine" | CaptionReading,
    thumbnails?: ThumbnailWorkers,
  ): Promise<() => Promise<void>>;
  /** Asks for the event loop's thread to run first; returns the nice value it got. */
  raiseEventLoopPriority(): number;
}

/** What a caller of buildService() decides. Every write-side switch defaults to "as main.ts". */
export interface ServiceSwitches {
  config: Config;
  log?: Logger;
  /** The write side; without it the service serves reads only (the edge reader). */
  writes?: WriteSide;
  /**
   * Resources opened by the caller (a test's fresh database and s3rver); the service's `close`
   * closes them too. Default: opened from the configuration.
   */
  resources?: Resources;
  /** Apply pending migrations before anything else (default true). */
  migrate?: boolean;
  /** A given thumbnailer (tests), null for none; default the worker pool. */
  thumbnails?: Thumbnailer | null;
  /** Start the job queue and work the job kinds (default true); a number caps its connections. */
  jobs?: boolean | { maxConnections: number };
  /**
   * Caption recognition: "engine" (default; OCR processes started by the first job), a given
   * reader (tests), or false for none.
   */
  recognition?: false | "engine" | CaptionReading;
  /** Warm the upload path at start (default true). */
  warmUp?: boolean;
  /** Sweep pending deletes (default true). */
  sweeper?: boolean;
  /** Work the perceptual-hash backfill jobs (default true; needs the thumbnailer). */
  similarBackfill?: boolean;
  /** The event loop's thread first, libvips' threads lowered (default true). */
  priorities?: boolean;
  /** Where the client assets are (default: `_build` beside the code). */
  assetsDir?: string;
  /** Build the client assets when missing (default true with writes), rebuilt with `dev`. */
  buildAssets?: boolean;
  dev?: boolean;
  /** How long `close` lets running jobs finish (default 10 s). */
  jobsGraceMs?: number;
  /** Password hashing (tests: a cheap one); default scrypt at OWASP's parameters. */
  passwords?: Services["passwords"];
}

/** A built service: its parts, its app, and what stops it. */
export interface Service {
  config: Config;
  log: Logger;
  services: Services;
  app: App;
  /** How to sign in (the start's listening line says it). */
  signIn: SignIn;
  /** Stops the background work and closes what the service opened, last opened first. */
  close(): Promise<void>;
}

/** Where `deno task build` wrote the client assets. */
export const DEFAULT_ASSETS_DIR = new URL("../_build", import.meta.url).pathname;

/** The database pools and the S3 store of the configuration, without embedded defaults. */
export function openReadResources(config: Config): Resources {
  const sql = createSql(config.DATABASE_URL!);
  const probeSql = createSql(config.DATABASE_URL!, { max: 1 });
  const searchSql = createSearchSql(config.DATABASE_URL!, config.SEARCH_CONNECTIONS);
  return {
    config,
    sql,
    probeSql,
    searchSql,
    store: new S3Store(s3Settings(config)),
    signIn: { username: config.ADMIN_USERNAME },
    close: async () => {
      await sql.end({ timeout: 5 }).catch(() => {});
      await probeSql.end({ timeout: 1 }).catch(() => {});
      await searchSql.end({ timeout: 5 }).catch(() => {});
    },
  };
}

/**
 * Builds the service the switches describe; nothing listens yet (the caller serves `app`). A
 * step that fails closes what the steps before it opened, and the error is thrown.
 */
export async function buildService(sw: ServiceSwitches): Promise<Service> {
  const log = sw.log ?? new Logger(sw.config.LOG_LEVEL);
  const w = sw.writes;
  /** What `close` runs, last first. */
  const stops: (() => unknown)[] = [];
  const close = async () => {
    // One part failing to stop does not leave the others running.
    for (const stop of stops.splice(0).reverse()) {
      await Promise.resolve().then(stop).catch((err) => log.warn("a part did not stop", { err }));
    }
  };
  try {
    const resources = sw.resources ??
      (w ? await w.openResources(sw.config, log) : openReadResources(sw.config));
    stops.push(resources.close);
    const { config, sql, probeSql, searchSql, store } = resources;
    const base: Services = { config, sql, probeSql, searchSql, store, log };
    if (sw.passwords) base.passwords = sw.passwords;
    if (!w) {
      const app = createReaderApp(base, sw.assetsDir ?? DEFAULT_ASSETS_DIR);
      return { config, log, services: base, app, signIn: resources.signIn, close };
    }

    if (sw.migrate !== false) await w.migrate(sql, store, log);
    // The job queue loads and checks its schema, and the upload path warms up, while the
    // thumbnail workers start. What started is stopped even when another part failed.
    const jobsOption = sw.jobs ?? true;
    const [started, queue, warmed] = await Promise.allSettled([
      sw.thumbnails === undefined ? w.startThumbnails(config) : null,
      jobsOption === false ? null : w.startJobs(
        config,
        log,
        typeof jobsOption === "object" ? jobsOption.maxConnections : undefined,
      ),
      sw.warmUp === false ? null : w.warmUp({ sql, store }),
    ]);
    const pool = started.status === "fulfilled" ? started.value : null;
    const jobs = queue.status === "fulfilled" ? queue.value : null;
    const priorities = sw.priorities !== false;
    if (priorities) {
      // Pixel work yields the cores to requests (adapters/thumbnails/pixel_threads.ts).
      const pixelThreads = w.lowerPixelThreads();
      stops.push(() => pixelThreads.stop());
    }
    if (pool) stops.push(() => pool.close());
    if (jobs) stops.push(() => jobs.stop(sw.jobsGraceMs));
    for (const part of [started, queue, warmed]) if (part.status === "rejected") throw part.reason;
    if (pool) log.info("thumbnail workers started", { workers: pool.stats().workers });
    const warm = warmed.status === "fulfilled" ? warmed.value : null;
    if (warm) log.info("upload path warmed up", { ...warm, ms: Math.round(warm.ms) });

    const thumbnails = pool ?? sw.thumbnails ?? undefined;
    const video = await w.openVideo(config, log);
    if (video) stops.push(() => video.close());
    const services: Services = {
      ...base,
      thumbnails,
      video,
      jobs: jobs ?? undefined,
      uploads: w.uploadState(),
    };
    if (jobs) await w.workImplications(jobs, services);
    if (jobs && services.video) await w.workVideoRenditions(jobs, services);
    const dev = sw.dev ?? false;
    if (sw.buildAssets !== false && await w.ensureAssets(dev)) {
      log.info("client assets built", { dev });
    }
    const app = w.createApp(services, { assetsDir: sw.assetsDir, dev });
    if (sw.sweeper !== false) {
      const stopSweeper = w.startDeleteSweeper(services);
      stops.push(() => void stopSweeper());
    }
    if (jobs && thumbnails && sw.similarBackfill !== false) {
      await w.workSimilarBackfill(jobs, services, thumbnails);
    }
    const recognition = sw.recognition ?? "engine";
    if (jobs && recognition) {
      const stopReader = await w.workRecognition(jobs, services, recognition, pool ?? undefined);
      // No job is taken from here on, then the reader stops: a reading in progress ends at once
      // (its job goes back to the queue untried) instead of holding the queue's graceful stop.
      stops.push(async () => {
        await jobs.stopTaking();
        await stopReader();
      });
    }
    // Everything that keeps its own priority (the database, the workers) is started: requests
    // first, where the system allows it (adapters/event_loop.ts).
    if (priorities) log.info("event loop priority", { nice: w.raiseEventLoopPriority() });
    return { config, log, services, app, signIn: resources.signIn, close };
  } catch (err) {
    await close();
    throw err;
  }
}
