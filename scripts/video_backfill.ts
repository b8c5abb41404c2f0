/**
 * `deno task video:backfill`: queues the MP4 and animated preview (services/video_renditions.ts)
 * of every moving image (GIF, animated WebP, MP4, WebM) that lacks them: uploaded before issue 45,
 * or whose job gave up. A WebP is queued only when its stored header says it is animated, which
 * the service reads as it goes (the database does not know). The running service makes them one
 * at a time, on any replica with FFmpeg; `deno task jobs` shows the progress. Reads DATABASE_URL
 * only.
 */
import { countMovingWithoutRenditions } from "../db/video_renditions.ts";
import { startVideoBackfill } from "../services/video_renditions.ts";
import { withJobQueue } from "./_queue_task.ts";

await withJobQueue("video:backfill", async (sql, jobs) => {
  const { moving, webp } = await countMovingWithoutRenditions(sql);
  const id = await startVideoBackfill(jobs);
  // Which WebPs move only their stored headers say: the service reads them as it goes.
  const webps = webp > 0
    ? ` ${webp} WebP(s) without one are checked, and the animated among them queued too.`
    : "";
  console.log(
    id
      ? `Queued: ${moving} moving image(s) lack their MP4 or preview; the service makes them one ` +
        `by one.${webps}`
      : `A backfill is already queued; ${moving} moving image(s) still lack their MP4 or ` +
        `preview.${webps}`,
  );
  console.log("`deno task jobs` shows its progress (queues video-backfill, video-rendition).");
});
