/**
 * Diagnostic: how much of what V8's young generation allocates survives its collections while
 * the service's client reads query results one at a time, nothing else in flight
 * (tests/_harness/gc_survival.ts; tests/db_client_test.ts holds it under 10%).
 *
 *   deno run -A bench/_gc_survival.ts [queries (20000)] [rows a query (51)]
 *
 * Reads `generate_series` on the bench server's `postgres` database: no seeded data needed.
 */
import { youngSurvival } from "../tests/_harness/gc_survival.ts";
import { databaseUrl } from "./_lib/databases.ts";

const [queries = "20000", rows = "51"] = Deno.args;
const gc = await youngSurvival(databaseUrl("postgres"), Number(queries), Number(rows));
console.log(
  `${queries} queries of ${rows} rows: ${gc.scavenges} scavenges, ${
    (gc.allocated / 1e6).toFixed(0)
  } MB allocated, ${(100 * gc.survived).toFixed(1)}% of it survived, pauses ${
    gc.pauseMs.toFixed(0)
  } ms (longest ${gc.longestMs.toFixed(1)}), ${gc.markCompacts} full collections`,
);
