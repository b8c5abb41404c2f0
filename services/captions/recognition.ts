/**
 * Caption recognition as durable jobs (adapters/jobs): one job per new image, sent after its upload
 * commits, worked by every replica with a warm recogniser; and `deno task caption:backfill`, a chain
 * of jobs that sends one for every image that has no text yet. A job that fails is retried with
 * back-off, and after its last try its error is kept (`deno task jobs`); the image keeps
 * `text: null` and a later backfill tries again.
 */
import type { Sql } from "../../db/client.ts";
import { setImageCaption } from "../../db/captions.ts";
import type { JobKind, JobQueue } from "../../adapters/jobs/mod.ts";
import type { Logger } from "../../adapters/log.ts";
import type { CaptionReading, Services, VideoTool } from "../deps.ts";
import { sniffVideo } from "../../domain/image_sniff.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import { type ObjectStore, readAll } from "../../adapters/storage/mod.ts";
import { normalizeCaption } from "../../domain/caption_text.ts";
import type { UploadState } from "../upload/state.ts";

import { CAPTION_BACKFILL_QUEUE, CAPTION_RECOGNITION_QUEUE } from "../queues.ts";

/** Images whose recognition one backfill job sends. */
export const CAPTION_BACKFILL_BATCH = 500;

export type { CaptionReading } from "../deps.ts";

/** What the recognition job needs. */
export interface RecognitionDeps {
  sql: Sql;
  store: ObjectStore;
  log: Logger;
  /** The recogniser, started on the first job (an OCR process of about 300 MB, warm in ~1 s). */
  reader: () => Promise<CaptionReading>;
  /**
   * Whether uploads or thumbnails are being worked on: recognition is the lower priority work and
   * waits for a quiet moment, for at most RECOGNITION_YIELD_MS per image.
   */
  busy?: () => boolean;
  /** Images read at once in this process, one per OCR process (default 1). */
  concurrency?: number;
  /** FFmpeg: a video's words are read from its representative frame; without it, none are. */
  video?: VideoTool | null;
}

/** How long the recogniser waits for work before it stops (issue 45: a small idle footprint). */
export const READER_IDLE_MS = 60_000;

/**
 * The service's recogniser, started by the first job that needs it rather than at start-up (a
 * warm engine takes about a second and an OCR process of about 300 MB; the edge reader and a board
 * nobody uploads to never pay for it), and stopped after `idleMs` without a reading, so an idle
 * board holds no OCR process; the next job starts it again. A start that failed is tried again
 * by the next job. `close()` stops it.
 */
export function lazyReader(
  start: () => Promise<CaptionReading & { close(): Promise<void> }>,
  idleMs = READER_IDLE_MS,
): { get: () => Promise<CaptionReading>; close: () => Promise<void> } {
  let started: Promise<CaptionReading> | null = null;
  let up: (CaptionReading & { close(): Promise<void> }) | null = null;
  let closed = false;
  let reading = 0;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const stopWhenIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      const reader = up;
      if (reading > 0 || !reader) return;
      // The next get() starts a new one; this one ends (its start was long ago).
      started = null;
      up = null;
      reader.close().catch(() => {});
    }, idleMs);
    // An idle timer never keeps the process alive.
    Deno.unrefTimer(idle as unknown as number);
  };
  return {
    get: () => {
      if (closed) return Promise.reject(new Error("The caption reader is closed"));
      clearTimeout(idle);
      started ??= start().then(async (reader) => {
        // Closed while it was starting: stop it as soon as it is up.
        if (closed) await reader.close();
        else {
          up = reader;
          stopWhenIdle();
        }
        return {
          read: async (image: Uint8Array, signal?: AbortSignal) => {
            reading++;
            clearTimeout(idle);
            try {
              return await reader.read(image, signal);
            } finally {
              if (--reading === 0 && up === reader) stopWhenIdle();
            }
          },
        };
      }).catch((err) => {
        started = null;
        throw err;
      });
      return started;
    },
    // Never waits for a start under way (a first start compiles and loads the model: seconds on
    // a busy machine; it stops itself once up); a reader that is up is stopped, which ends a
    // reading in progress (its job is retried later).
    close: async () => {
      closed = true;
      clearTimeout(idle);
      const reader = up;
      up = null;
      await reader?.close();
    },
  };
}

/**
 * How long after an upload recognition still waits: uploads sent one after another leave gaps of a
 * few ms, and a recognition started in one (its original read from storage, the OCR process's work)
 * slowed the next upload by a fifth (B2, B8; bench/RESULTS.md#notes-moved-from-code-comments).
 */
const UPLOAD_QUIET_MS = 300;

/** Longest a recognition waits for uploads and thumbnails before it starts anyway. */
export const RECOGNITION_YIELD_MS = 10_000;

/**
 * Sends the recognition job of a new image. A failure is logged, not thrown: the upload has
 * committed, and `deno task caption:backfill` picks up any image still without text.
 */
export async function queueRecognition(services: Services, shortId: string): Promise<void> {
  if (!services.jobs) return;
  try {
    await services.jobs.send(CAPTION_RECOGNITION_QUEUE, { short_id: shortId }, { key: shortId });
  } catch (err) {
    services.log.warn("caption recognition not queued", { short_id: shortId, err });
  }
}

/** Where a moving image's second try at a caption looks: past the first frames' window. */
const SECOND_FRAME_FROM_S = 3;

const isGif = (b: Uint8Array) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38;

/**
 * Recognises one image's caption and stores it, unless a person wrote one meanwhile. A GIF or a
 * video whose first reading found no words gets a second, from a frame a few seconds in.
 */
export async function recognizeImage(deps: RecognitionDeps, shortId: string): Promise<void> {
  const waitUntil = performance.now() + RECOGNITION_YIELD_MS;
  while (deps.busy?.() && performance.now() < waitUntil) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const original = await deps.store.get(originalKey(shortId));
  if (!original) return; // deleted since the job was sent
  const kept: Uint8Array = await readAll(original.body);
  let bytes = kept;
  const video = sniffVideo(kept);
  if (video) {
    // The frame its poster shows (services/upload/video.ts); no FFmpeg here: no words.
    if (!deps.video) return;
    bytes = await deps.video.frame(kept, video.demuxer, { background: true });
  }
  const started = performance.now();
  const reader = await deps.reader();
  let { text } = await reader.read(bytes);
  const demuxer = video?.demuxer ?? (isGif(kept) ? "gif" : null);
  if (!text.trim() && demuxer && deps.video) {
    // A moving image whose first frames have no words: its caption may come later (issue 45).
    const second = await deps.video.frame(kept, demuxer, {
      fromSeconds: SECOND_FRAME_FROM_S,
      background: true,
    })
      .catch(() => null); // shorter than that: no second frame
    if (second) ({ text } = await reader.read(second));
  }
  const stored = await setImageCaption(deps.sql, shortId, normalizeCaption(text), "ocr");
  deps.log.debug("caption recognised", {
    short_id: shortId,
    ms: Math.round(performance.now() - started),
    words: text ? text.split(/\s+/).length : 0,
    stored,
  });
}

/** The recognition job kind every replica works, one image at a time. */
export function recognitionKind(deps: RecognitionDeps): JobKind<{ short_id: string }> {
  return {
    name: CAPTION_RECOGNITION_QUEUE,
    handler: (job) => recognizeImage(deps, job.data.short_id),
    retryLimit: 3,
    retryDelaySeconds: 30,
    // A recognition is bounded by the recogniser's own limit; this only frees a dead worker's job.
    expireInSeconds: 300,
    concurrency: deps.concurrency ?? 1,
  };
}

/**
 * Works caption recognition and its backfill in this process, as the service does (main.ts,
 * bench/serve.ts), yielding to `thumbnails` while they have jobs waiting; returns what stops the
 * recogniser (after the queue has stopped).
 */
export async function workRecognition(
  jobs: JobQueue,
  deps: Omit<RecognitionDeps, "reader" | "busy"> & {
    thumbnails: { stats(): { queued: number; busy: number } };
    /** The uploads of this service: recognition waits while they are under way. */
    uploads?: UploadState;
    /** MAX_IMAGE_PIXELS: larger images are not decoded for reading either. */
    maxPixels: number;
    /** CAPTION_WORKERS: OCR processes, each reading one image at a time. */
    workers: number;
    /** CAPTION_IDLE_SECONDS: how long they wait for work before they stop. */
    idleMs?: number;
  },
): Promise<() => Promise<void>> {
  const { sql, store, log, thumbnails, uploads, maxPixels, workers, video, idleMs } = deps;
  const reader = lazyReader(
    async () =>
      (await import("../../adapters/ocr/recognizer.ts")).CaptionReader.start({
        maxPixels,
        workers,
      }),
    idleMs,
  );
  await jobs.work(recognitionKind({
    sql,
    store,
    log,
    reader: reader.get,
    video,
    concurrency: workers,
    busy: () => {
      const pool = thumbnails.stats();
      return pool.queued + pool.busy > 0 || (uploads?.busy(UPLOAD_QUIET_MS) ?? false);
    },
  }));
  await jobs.work(captionBackfillKind({ sql, jobs, log }));
  return reader.close;
}

/** Sends the first job of a backfill chain (none when one is already waiting to start). */
export async function startCaptionBackfill(jobs: JobQueue): Promise<string | null> {
  await jobs.declare({ name: CAPTION_BACKFILL_QUEUE });
  await jobs.declare({ name: CAPTION_RECOGNITION_QUEUE });
  return await jobs.send(CAPTION_BACKFILL_QUEUE, { after: "0" }, { key: "after-0" });
}

/**
 * Sends the recognition jobs of one batch of images without text after `seq` = `after`; returns
 * the next batch's cursor, or null at the end.
 */
export async function captionBackfillBatch(
  sql: Sql,
  jobs: JobQueue,
  after: string,
): Promise<string | null> {
  const rows = await sql<{ short_id: string; seq: string }[]>`
    select short_id, seq::text as seq from images
    where text is null and seq > ${after}::bigint
    order by images.seq limit ${CAPTION_BACKFILL_BATCH}`;
  for (const row of rows) {
    await jobs.send(CAPTION_RECOGNITION_QUEUE, { short_id: row.short_id }, { key: row.short_id });
  }
  return rows.length === CAPTION_BACKFILL_BATCH ? rows[rows.length - 1].seq : null;
}

/** The backfill's job kind: a batch of recognition jobs, then the next batch's job. */
export function captionBackfillKind(
  deps: { sql: Sql; jobs: JobQueue; log: Logger },
): JobKind<{ after: string }> {
  return {
    name: CAPTION_BACKFILL_QUEUE,
    handler: async (job) => {
      const next = await captionBackfillBatch(deps.sql, deps.jobs, job.data.after);
      if (next !== null) {
        await deps.jobs.send(CAPTION_BACKFILL_QUEUE, { after: next }, { key: `after-${next}` });
      } else deps.log.info("caption backfill: every image without text has its job");
    },
  };
}
