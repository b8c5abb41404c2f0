/**
 * Child process of faults_test.ts: the service's own database client (db/client.ts) with
 * queries and transactions waiting on a lock when their connections are terminated. Exits 0
 * and prints "survived" when the process outlives the kill; an uncaught exception ends it.
 * Usage: deno run -A _pg_kill_child.ts <database url>
 */
import postgres from "postgres";
import { createSql } from "../../db/client.ts";

const url = Deno.args[0];
const name = new URL(url).pathname.slice(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const admin = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: "a" } });
const holder = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: "h" } });
await admin`create table if not exists t (x int)`;
const sql = createSql(url);
await holder.begin(async (tx) => {
  await tx`lock table t in access exclusive mode`;
  const queries = Array.from(
    { length: 8 },
    (_, i) =>
      (i % 2 ? sql.begin((t) => t`select * from t`) : sql`select * from t`).then(
        () => "ok",
        (e) => e.code ?? e.message,
      ),
  );
  await sleep(300);
  await admin`select pg_terminate_backend(pid) from pg_stat_activity
    where datname = ${name} and application_name = 'reaction-board'`;
  console.log("answers", JSON.stringify(await Promise.all(queries)));
});
await sleep(500);
console.log("survived");
await Promise.race([sql.end({ timeout: 1 }), sleep(2000)]);
await admin.end();
await holder.end();
Deno.exit(0);
