/**
 * Child process of faults_test.ts: the service's own database client (db/client.ts) with
 * queries and transactions waiting on a lock when their connections are terminated. It waits
 * until PostgreSQL shows all of them waiting on the lock (pg_locks), kills them, then checks
 * that the same client still answers. Prints one JSON line, `result {...}`: what each waiting
 * query ended with (its SQLSTATE, or "ok"), how many were seen waiting and killed, and the
 * answer of a query after the kill; then exits 0. An uncaught exception ends it instead.
 * Usage: deno run -A tests/_harness/pg_kill_child.ts <database url>
 */
import postgres from "postgres";
import { createSql } from "../../db/client.ts";

const WAITERS = 8;
const url = Deno.args[0];
const name = new URL(url).pathname.slice(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const admin = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: "a" } });
const holder = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: "h" } });
await admin`create table if not exists t (x int)`;
const sql = createSql(url);

/** How many of the client's backends wait for a lock they have not been granted. */
async function waiting(): Promise<number> {
  const [{ n }] = await admin<{ n: number }[]>`
    select count(distinct l.pid)::int as n from pg_locks l
    join pg_stat_activity a on a.pid = l.pid
    where not l.granted and a.datname = ${name} and a.application_name = 'reaction-board'`;
  return n;
}

let seenWaiting = 0;
let killed = 0;
let answers: string[] = [];
await holder.begin(async (tx) => {
  await tx`lock table t in access exclusive mode`;
  const queries = Array.from(
    { length: WAITERS },
    (_, i) =>
      (i % 2 ? sql.begin((t) => t`select * from t`) : sql`select * from t`).then(
        () => "ok",
        (e) => e.code ?? e.message,
      ),
  );
  const deadline = Date.now() + 20_000;
  while ((seenWaiting = await waiting()) < WAITERS && Date.now() < deadline) await sleep(20);
  const rows = await admin<{ killed: boolean }[]>`
    select pg_terminate_backend(pid) as killed from pg_stat_activity
    where datname = ${name} and application_name = 'reaction-board'`;
  killed = rows.filter((r) => r.killed).length;
  answers = await Promise.all(queries);
});
// The lock is gone: the client must answer on fresh connections.
const after = await Promise.race([
  sql`select 41 + 1 as n`.then(([r]) => r.n as number, (e) => String(e.code ?? e.message)),
  sleep(10_000).then(() => "no answer in 10 s"),
]);
console.log(`result ${JSON.stringify({ seenWaiting, killed, answers, after })}`);
await Promise.race([sql.end({ timeout: 1 }), sleep(2000)]);
await admin.end();
await holder.end();
Deno.exit(0);
