/**
 * `deno task phash:backfill`: queues the perceptual-hash backfill (lib/similar/backfill.ts) on the
 * durable job queue, for images that have no hash yet. The running service works the jobs (on any
 * replica) and survives restarts; `deno task jobs` shows the progress. Reads DATABASE_URL only.
 */
import postgres from "postgres";
import { isPostgresUrl, normalizeDatabaseUrl } from "../lib/config.ts";
import { JobQueue } from "../lib/jobs/mod.ts";
import { Logger } from "../lib/log.ts";
import { startPhashBackfill } from "../lib/similar/backfill.ts";
import { orExit, StartupError } from "../lib/startup.ts";

const url = await orExit(() => {
  const given = Deno.env.get("DATABASE_URL")?.trim();
  if (!given || !isPostgresUrl(given)) {
    throw new StartupError(
      "deno task phash:backfill queues jobs in DATABASE_URL (postgres://...); set it to the " +
        "service's database.",
    );
  }
  return normalizeDatabaseUrl(given);
});
const sql = postgres(url, { max: 1, onnotice: () => {} });
const jobs = await JobQueue.start(url, new Logger("warn"), { maxConnections: 1 });
try {
  const [{ n }] = await sql<
    { n: number }[]
  >`select count(*)::int as n from images where phash is null`;
  const id = await startPhashBackfill(jobs);
  console.log(
    id
      ? `Queued: ${n} image(s) have no perceptual hash; the service hashes them in batches.`
      : `A backfill is already queued; ${n} image(s) still have no perceptual hash.`,
  );
  console.log("`deno task jobs` shows its progress (queue phash-backfill).");
} finally {
  await jobs.stop(0);
  await sql.end();
}
