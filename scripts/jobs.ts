/**
 * `deno task jobs`: the job queue's state: per queue, the jobs waiting, running and failed, the
 * rate they were done at, and the last failures with their errors. Reads the database directly
 * (DATABASE_URL), so it works against any replica's database without signing in.
 */
import { JobQueue } from "../adapters/jobs/mod.ts";
import { isPostgresUrl, normalizeDatabaseUrl } from "../adapters/config.ts";
import { Logger } from "../adapters/log.ts";
import { orExit, StartupError } from "../adapters/startup.ts";

// Only the database is needed, not the service's whole configuration (sign-in secrets and all).
const url = await orExit(() => {
  const given = Deno.env.get("DATABASE_URL")?.trim();
  if (!given || !isPostgresUrl(given)) {
    throw new StartupError(
      "deno task jobs reads the queue from DATABASE_URL (postgres://...); set it to the " +
        "service's database.",
    );
  }
  return normalizeDatabaseUrl(given);
});
const jobs = await JobQueue.start(url, new Logger("warn"), { maxConnections: 1 });
try {
  const stats = await jobs.stats();
  if (stats.length === 0) console.log("No queues yet: no background work has been sent.");
  else {
    console.table(Object.fromEntries(stats.map((s) => [s.name, {
      waiting: s.queued,
      running: s.active,
      failed: s.failed,
      "done/min": s.perMinute ?? "-",
      stored: s.total,
    }])));
  }
  for (const s of stats.filter((s) => s.failed > 0)) {
    console.log(`\nLast failures of ${s.name}:`);
    for (const f of await jobs.failed(s.name, 5)) {
      console.log(`  ${f.id} after ${f.retryCount + 1} tries: ${f.error}`);
    }
  }
} finally {
  await jobs.stop(0);
}
