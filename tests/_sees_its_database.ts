/**
 * A test module that queries the run's PostgreSQL: run_guard_test.ts runs it through the runner
 * with no database URL, to see the embedded fallback serve a whole run. It also prints what the
 * runner set for the test files: TEST_NO_NICE and DENO_JOBS.
 */
import postgres from "postgres";
import { serverUrl } from "./_harness/db.ts";

Deno.test("the run's PostgreSQL answers", async () => {
  const sql = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  try {
    const [{ version }] = await sql`select version()`;
    console.log(`server: ${version}`);
    for (const key of ["TEST_NO_NICE", "DENO_JOBS"]) console.log(`${key}=${Deno.env.get(key)}`);
  } finally {
    await sql.end();
  }
});
