/**
 * Every durable job queue's name, in one place, in one pattern: `<concept>-<work>`, lower-case
 * kebab, the concept named as the code names it (caption, similar, tag). pg-boss stores a queue's
 * name with each of its jobs, so a renamed queue keeps its former names in FORMER_QUEUE_NAMES:
 * the service works what is left in them with the new queue's handler (tests/jobs_test.ts, "a
 * kind also works the jobs still queued under its former names").
 */

/** One job per new image: read its caption. */
export const CAPTION_RECOGNITION_QUEUE = "caption-recognition";
/** The caption backfill's batches (`deno task caption:backfill`). */
export const CAPTION_BACKFILL_QUEUE = "caption-backfill";
/** The perceptual-hash backfill's batches (`deno task similar:backfill`). */
export const SIMILAR_BACKFILL_QUEUE = "similar-backfill";
/** Applying a tag's implications to the images that carry it. */
export const TAG_IMPLICATIONS_QUEUE = "tag-implications";

/** One job per new moving image (GIF, animated WebP, MP4, WebM): its MP4 and preview (issue 45). */
export const VIDEO_RENDITION_QUEUE = "video-rendition";

/** The MP4 and preview backfill's batches (`deno task video:backfill`). */
export const VIDEO_BACKFILL_QUEUE = "video-backfill";

/** Every queue the service sends to and works. */
export const QUEUE_NAMES: readonly string[] = [
  CAPTION_RECOGNITION_QUEUE,
  CAPTION_BACKFILL_QUEUE,
  SIMILAR_BACKFILL_QUEUE,
  TAG_IMPLICATIONS_QUEUE,
  VIDEO_RENDITION_QUEUE,
  VIDEO_BACKFILL_QUEUE,
];

/** The names a queue had before, whose jobs may still wait: worked, never sent to. */
export const FORMER_QUEUE_NAMES: Readonly<Record<string, readonly string[]>> = {
  [SIMILAR_BACKFILL_QUEUE]: ["phash-backfill"],
};
