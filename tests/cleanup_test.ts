/**
 * Nothing a test run makes outlives it: each test file closes what it opened in
 * `Deno.test.afterAll`, which runs even when `--filter` skips every test of the file, and
 * `deno task test` drops whatever databases of its run are still there at the end.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { hostEnv, spawnChild } from "./_harness/child.ts";
import { dropRunDatabases, newTestRun, serverUrl } from "./_harness/db.ts";

/** Runs deno with `args`; its exit code and output. */
async function deno(args: string[], env: Record<string, string>) {
  const child = spawnChild({ args, env: { ...hostEnv(), ...env } });
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    const { code } = await child.status;
    return { code, out: child.output() };
  } finally {
    clearTimeout(timer);
  }
}

/** The databases of run `id` on the test server. */
async function databasesOf(id: string): Promise<string[]> {
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  try {
    const rows = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`t\\_${id}\\_%`} order by 1`;
    return rows.map((r) => r.datname);
  } finally {
    await admin.end();
  }
}

const leftBehind = (out: string) => /left behind: (t_\w+)/.exec(out)?.[1];

Deno.test("a file's afterAll cleanup runs when --filter skips all its tests", async () => {
  const run = newTestRun();
  try {
    const { code, out } = await deno(
      [
        "test",
        "-A",
        "--lock=tests/deno.lock", // the tests' lockfile, as `deno task test` gives it
        "--no-check",
        "--filter",
        "no test has this name",
        "tests/docs_test.ts",
        "tests/db_insert_test.ts",
        "tests/_leaves_a_database.ts",
      ],
      { TEST_DATABASE_URL: serverUrl(), ...run.env },
    );
    assert.equal(code, 0, out);
    assert.match(out, /\| 0 passed \| 0 failed \| \d+ filtered out/, out);
    // The module without cleanup shows that the run's databases are found where they are left.
    const kept = leftBehind(out);
    assert.ok(kept?.startsWith(`t_${run.id}_`), out);
    assert.deepEqual(await databasesOf(run.id), [kept]);
  } finally {
    await dropRunDatabases(serverUrl(), run.id);
  }
});

Deno.test("deno task test drops the databases its files left behind, and only those", async () => {
  const other = newTestRun(); // another run on the same server, still going
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  const bystander = `t_${other.id}_bystander`;
  await admin.unsafe(`create database ${bystander}`);
  try {
    const { code, out } = await deno(
      [
        "run",
        "-A",
        "--lock=tests/deno.lock",
        "tests/run.ts",
        "--no-check",
        "tests/_leaves_a_database.ts",
      ],
      { TEST_DATABASE_URL: serverUrl() },
    );
    assert.equal(code, 0, out);
    const name = leftBehind(out);
    assert.match(name ?? "", /^t_[0-9a-f]{8}_/, out);
    assert.match(out, new RegExp(`dropped 1 database\\(s\\) left behind: ${name}`));
    const [{ n }] = await admin<{ n: number }[]>`
      select count(*)::int as n from pg_database where datname = ${name!}`;
    assert.equal(n, 0, `${name} is still there`);
    // Its template (createRunTemplate) too: none of the run's databases is left.
    assert.deepEqual(await databasesOf(name!.slice("t_".length, "t_".length + 8)), []);
    assert.deepEqual(await databasesOf(other.id), [bystander]);
  } finally {
    await admin.unsafe(`drop database if exists ${bystander}`);
    await admin.end();
  }
});
