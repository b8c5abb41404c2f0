/**
 * `deno task video:backfill`: queues the MP4 and animated preview (services/video_renditions.ts)
 * of every moving image (GIF, MP4, WebM) that lacks them: uploaded before issue 45, or whose job
 * gave up. The running service makes them one at a time, on any replica with FFmpeg; `deno task
 * jobs` shows the progress. Reads DATABASE_URL only.
 */
import { countMovingWithoutRenditions } from "../db/video_renditions.ts";
import { startVideoBackfill } from "../services/video_renditions.ts";
import { withJobQueue } from "./_queue_task.ts";

await withJobQueue("video:backfill", async (sql, jobs) => {
  const n = await countMovingWithoutRenditions(sql);
  const id = await startVideoBackfill(jobs);
  console.log(
    id
      ? `Queued: ${n} moving image(s) lack their MP4 or preview; the service makes them one by one.`
      : `A backfill is already queued; ${n} moving image(s) still lack their MP4 or preview.`,
  );
  console.log("`deno task jobs` shows its progress (queues video-backfill, video-rendition).");
});
