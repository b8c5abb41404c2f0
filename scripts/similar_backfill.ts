/**
 * `deno task similar:backfill` (formerly `phash:backfill`): queues the perceptual-hash backfill
 * (services/similar/backfill.ts) on the durable job queue, for images that have no hash yet. The
 * running service works the jobs (on any replica) and survives restarts; `deno task jobs` shows
 * the progress. Reads DATABASE_URL only.
 */
import { startSimilarBackfill } from "../services/similar/backfill.ts";
import { withJobQueue } from "./_queue_task.ts";

await withJobQueue("similar:backfill", async (sql, jobs) => {
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from images where phash is null`;
  const id = await startSimilarBackfill(jobs);
  console.log(
    id
      ? `Queued: ${n} image(s) have no perceptual hash; the service hashes them in batches.`
      : `A backfill is already queued; ${n} image(s) still have no perceptual hash.`,
  );
  console.log("`deno task jobs` shows its progress (queue similar-backfill).");
});
