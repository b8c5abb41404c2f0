/**
 * What the tasks that queue a backfill share: DATABASE_URL checked (one line and exit 1 when it
 * is missing), a one-connection database pool and the job queue, both closed at the end.
 */
import postgres from "postgres";
import { isPostgresUrl, normalizeDatabaseUrl } from "../adapters/config.ts";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { Logger } from "../adapters/log.ts";
import { orExit, StartupError } from "../adapters/startup.ts";

/** Runs `fn` with the service's database and job queue; `task` names the task in the message. */
export async function withJobQueue(
  task: string,
  fn: (sql: postgres.Sql, jobs: JobQueue) => Promise<void>,
): Promise<void> {
  const url = await orExit(() => {
    const given = Deno.env.get("DATABASE_URL")?.trim();
    if (!given || !isPostgresUrl(given)) {
      throw new StartupError(
        `deno task ${task} queues jobs in DATABASE_URL (postgres://...); set it to the ` +
          "service's database.",
      );
    }
    return normalizeDatabaseUrl(given);
  });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const jobs = await JobQueue.start(url, new Logger("warn"), { maxConnections: 1 });
  try {
    await fn(sql, jobs);
  } finally {
    await jobs.stop(0);
    await sql.end();
  }
}
