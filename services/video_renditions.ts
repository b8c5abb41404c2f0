/**
 * The MP4 rendition of every moving image (issue 45): a GIF, an animated WebP, an MP4 or a WebM
 * gets an H.264 MP4 without sound (adapters/video/ffmpeg.ts; an animated WebP's frames decoded
 * by sharp, adapters/video/animated_webp.ts), for chats that play MP4 inline and for players. It is
 * made by a durable job sent after the upload commits, never on the request's path, one at a time
 * per process and each within VIDEO_RENDITION_TIMEOUT_SECONDS; stored at videoRenditionKey() and
 * then recorded on the row (`mp4_bytes`), so the routes and chat answers know it exists without
 * asking storage. Until then, /video.mp4 answers 404 `rendition_pending`.
 */
import type { Sql } from "../db/client.ts";
import {
  getRenditionSource,
  movingWithoutRenditions,
  setMp4Bytes,
  setPreviewBytes,
} from "../db/video_renditions.ts";
import { isMovingType, mayMove } from "../domain/share_links.ts";
import type { JobKind, JobQueue } from "../adapters/jobs/mod.ts";
import type { Logger } from "../adapters/log.ts";
import { type ObjectStore, readAll } from "../adapters/storage/mod.ts";
import { originalKey, previewKey, videoRenditionKey } from "../domain/storage_keys.ts";
import { isAnimatedWebp, sniffVideo } from "../domain/image_sniff.ts";
import type { Services, VideoTool } from "./deps.ts";
import { VIDEO_BACKFILL_QUEUE, VIDEO_RENDITION_QUEUE } from "./queues.ts";

/** What the job needs. */
export interface VideoRenditionDeps {
  sql: Sql;
  store: ObjectStore;
  log: Logger;
  video: VideoTool;
  /** One transcode's time limit (ms). */
  timeoutMs: number;
  /** Seconds of a moving image transcoded at most (MAX_VIDEO_SECONDS). */
  maxSeconds: number;
}

/**
 * Sends the rendition job of a new moving image (a WebP when `bytes`, its original, is animated);
 * nothing without a queue or FFmpeg.
 */
export async function queueVideoRendition(
  services: Pick<Services, "jobs" | "video" | "log">,
  image: { short_id: string; content_type: string },
  bytes: Uint8Array,
): Promise<void> {
  if (!services.jobs || !services.video) return;
  if (!isMovingType(image.content_type) && !isAnimatedWebp(bytes)) return;
  try {
    await services.jobs.send(VIDEO_RENDITION_QUEUE, { short_id: image.short_id }, {
      key: image.short_id,
    });
  } catch (err) {
    services.log.warn("MP4 rendition not queued", { short_id: image.short_id, err });
  }
}

/** The animated preview's bounds (issue 45: small enough for a grid). */
export const PREVIEW_MAX_SIDE = 400;
export const PREVIEW_MAX_SECONDS = 6;

/**
 * Makes and stores one image's animated preview, then its MP4, each unless it exists (a retry
 * after a failure makes only what is missing); nothing when the image is gone or does not move.
 */
export async function makeVideoRendition(deps: VideoRenditionDeps, shortId: string) {
  const row = await getRenditionSource(deps.sql, shortId);
  if (!row || !mayMove(row.content_type)) return;
  if (row.mp4_bytes !== null && row.preview_bytes !== null) return;
  const original = await deps.store.get(originalKey(shortId));
  if (!original) return; // deleted since the job was sent
  const bytes = await readAll(original.body);
  if (row.content_type === "image/webp" && !isAnimatedWebp(bytes)) return; // a still WebP
  const demuxer = row.content_type === "image/gif"
    ? "gif"
    : row.content_type === "image/webp"
    ? "webp"
    : sniffVideo(bytes)?.demuxer;
  if (!demuxer) throw new Error(`${shortId}: the original is not the ${row.content_type} it was`);
  const started = performance.now();
  if (row.preview_bytes === null) {
    const preview = await deps.video.preview(bytes, demuxer, {
      timeoutMs: deps.timeoutMs,
      maxSeconds: PREVIEW_MAX_SECONDS,
      maxSide: PREVIEW_MAX_SIDE,
    });
    const key = previewKey(shortId);
    await deps.store.put(key, preview, {
      contentLength: preview.length,
      contentType: "image/webp",
    });
    // Deleted meanwhile: the delete listed this key too (services/deleter.ts), so the sweeper or
    // this removal takes it away.
    if (!await setPreviewBytes(deps.sql, shortId, preview.length)) {
      await deps.store.delete(key);
      return;
    }
  }
  if (row.mp4_bytes !== null) return;
  const mp4 = await deps.video.mp4(bytes, demuxer, {
    timeoutMs: deps.timeoutMs,
    maxSeconds: deps.maxSeconds,
  });
  const key = videoRenditionKey(shortId);
  await deps.store.put(key, mp4, { contentLength: mp4.length, contentType: "video/mp4" });
  if (!await setMp4Bytes(deps.sql, shortId, mp4.length)) await deps.store.delete(key);
  deps.log.debug("preview and MP4 rendition made", {
    short_id: shortId,
    ms: Math.round(performance.now() - started),
    bytes: mp4.length,
    original_bytes: bytes.length,
  });
}

/** The rendition job kind: one transcode at a time per process, retried with back-off. */
export function videoRenditionKind(deps: VideoRenditionDeps): JobKind<{ short_id: string }> {
  return {
    name: VIDEO_RENDITION_QUEUE,
    handler: (job) => makeVideoRendition(deps, job.data.short_id),
    retryLimit: 3,
    retryDelaySeconds: 30,
    // The transcode is bounded by its own limit; this only frees a dead worker's job.
    expireInSeconds: Math.ceil(deps.timeoutMs / 1000) + 120,
    concurrency: 1,
  };
}

/** Images whose rendition jobs one backfill job sends. */
export const VIDEO_BACKFILL_BATCH = 500;

/** Sends the first job of a backfill chain (none when one is already waiting to start). */
export async function startVideoBackfill(jobs: JobQueue): Promise<string | null> {
  await jobs.declare({ name: VIDEO_BACKFILL_QUEUE });
  await jobs.declare({ name: VIDEO_RENDITION_QUEUE });
  return await jobs.send(VIDEO_BACKFILL_QUEUE, { after: "0" }, { key: "after-0" });
}

/** The bytes of a WebP's header that say whether it is animated (VP8X's flags end at byte 20). */
const WEBP_HEADER_BYTES = 21;

/**
 * Whether the stored original of the WebP `shortId` is animated, from its header alone (a ranged
 * read, not the whole file); false when it is gone.
 */
async function storedWebpIsAnimated(store: ObjectStore, shortId: string): Promise<boolean> {
  const head = await store.get(originalKey(shortId), { start: 0, end: WEBP_HEADER_BYTES - 1 });
  if (!head) return false;
  return isAnimatedWebp(await readAll(head.body));
}

/**
 * The backfill's job kind (`deno task video:backfill`): the rendition jobs of a batch of moving
 * images without their MP4 or preview (uploaded before issue 45, or whose job gave up), then the
 * next batch's job. A WebP is queued only when its stored header says it is animated: the
 * database does not know, and a still WebP has nothing to make. The rendition jobs are worked one
 * at a time, like an upload's.
 */
export function videoBackfillKind(
  deps: { sql: Sql; store: ObjectStore; jobs: JobQueue; log: Logger },
): JobKind<{ after: string }> {
  return {
    name: VIDEO_BACKFILL_QUEUE,
    handler: async (job) => {
      const rows = await movingWithoutRenditions(deps.sql, job.data.after, VIDEO_BACKFILL_BATCH);
      for (const row of rows) {
        if (
          row.content_type === "image/webp" && !await storedWebpIsAnimated(deps.store, row.short_id)
        ) {
          continue;
        }
        await deps.jobs.send(VIDEO_RENDITION_QUEUE, { short_id: row.short_id }, {
          key: row.short_id,
        });
      }
      if (rows.length === VIDEO_BACKFILL_BATCH) {
        const next = rows[rows.length - 1].seq;
        await deps.jobs.send(VIDEO_BACKFILL_QUEUE, { after: next }, { key: `after-${next}` });
      } else deps.log.info("video backfill: every moving image has its rendition job");
    },
  };
}
