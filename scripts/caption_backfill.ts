/**
 * `deno task caption:backfill` (formerly `text:backfill`): queues caption recognition
 * (services/captions/recognition.ts) for every image that has no caption yet (uploaded before
 * recognition existed, or whose recognition gave up). The running service works the jobs on any
 * replica, one image at a time, after waiting thumbnails; `deno task jobs` shows the progress.
 * Reads DATABASE_URL only.
 */
import { startCaptionBackfill } from "../services/captions/recognition.ts";
import { withJobQueue } from "./_queue_task.ts";

await withJobQueue("caption:backfill", async (sql, jobs) => {
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from images where text is null`;
  const id = await startCaptionBackfill(jobs);
  console.log(
    id
      ? `Queued: ${n} image(s) have no caption text; the service recognises them one by one.`
      : `A backfill is already queued; ${n} image(s) still have no caption text.`,
  );
  console.log(
    "`deno task jobs` shows its progress (queues caption-backfill, caption-recognition).",
  );
});
