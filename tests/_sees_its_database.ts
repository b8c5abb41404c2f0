/**
 * A test module that queries the run's PostgreSQL: run_guard_test.ts runs it through the runner
 * with no database URL, to see the embedded fallback serve a whole run.
 */
import postgres from "postgres";
import { serverUrl } from "./_harness/db.ts";

Deno.test("the run's PostgreSQL answers", async () => {
  const sql = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  try {
    const [{ version }] = await sql`select version()`;
    console.log(`server: ${version}`);
  } finally {
    await sql.end();
  }
});
