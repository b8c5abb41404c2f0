/**
 * `deno task test`: checks the database URL before any test module is loaded (anything that is
 * not PostgreSQL stops the run with a clear message and a non-zero exit), resolves the test
 * database, then runs `deno test` with TEST_DATABASE_URL pointing at it, and at the end drops
 * whatever databases of the run are left (test files clean up after themselves, but a file that
 * crashed or was killed cannot). It says once which Chromium the browser tests drive, or why they
 * are skipped (no browser found) or fail (none found in CI). It builds the client bundle first when there is none.
 * The tests run in a shuffled order whose seed it prints (TEST_SHUFFLE_SEED replays one; see
 * tests/_harness/shuffle.ts), so no file may depend on the order of its tests.
 * It runs one test file more than there are cores at once (DENO_JOBS overrides), and says so.
 * Extra arguments are passed to `deno test` (for example a single file). It does not type-check:
 * `deno task check` does (before the tests in `deno task ok` and CI).
 */
import { browserChoice } from "./_harness/browser.ts";
import { createRunTemplate, dropRunDatabases, newTestRun } from "./_harness/db.ts";
import { checkDatabaseUrl, givenDatabaseUrl, resolveTestDatabase } from "./_harness/resolve_db.ts";
import { chooseShuffleSeed, SEED_VARIABLE } from "./_harness/shuffle.ts";

const TEST_LOCK = new URL("./deno.lock", import.meta.url).pathname;

const refusal = checkDatabaseUrl(givenDatabaseUrl());
if (refusal) {
  console.error(refusal);
  Deno.exit(2);
}
const shuffle = chooseShuffleSeed(Deno.env.get(SEED_VARIABLE), Deno.args);
if (shuffle && "error" in shuffle) {
  console.error(shuffle.error);
  Deno.exit(2);
}

// The client bundle the pages and browser tests load: on a fresh clone nothing has built it yet
// (`deno task start` builds it when it starts, and the tests may come first). An existing one is
// left alone, as `deno task start` leaves it: a service running from this checkout serves it.
try {
  await Deno.stat(new URL("../_build/manifest.json", import.meta.url));
} catch {
  const { buildAssets } = await import("../adapters/islands/build.ts");
  await buildAssets({ writeGen: false });
  console.log("tests: client assets built");
}

const server = await resolveTestDatabase();
const run = newTestRun();
console.log(`tests: PostgreSQL from ${server.source}`);
// Said once here; each browser test file decides the same way (tests/_harness/browser.ts).
const browser = browserChoice();
console.log(`tests: ${browser.path ? `browser ${browser.path}` : browser.reason}`);
let code = 1;
try {
  // Every service a test starts copies this migrated database instead of migrating its own.
  const template = await createRunTemplate(server.url, run.id);
  const order = shuffle ? [`--shuffle=${shuffle.seed}`] : [];
  if (shuffle) {
    console.log(
      `tests: shuffled with seed ${shuffle.seed}` +
        (shuffle.given ? ` (${SEED_VARIABLE})` : `; replay with ${SEED_VARIABLE}=${shuffle.seed}`),
    );
  }
  // One test file more than there are cores: files that wait (a timer, a child process, a
  // browser) leave a core idle otherwise. docs/testing.md has the figures; DENO_JOBS overrides.
  const jobs = Deno.env.get("DENO_JOBS") || String(navigator.hardwareConcurrency + 1);
  console.log(`tests: ${jobs} files at once (DENO_JOBS)`);
  const child = new Deno.Command(Deno.execPath(), {
    // The tests' lockfile: the service's (deno.lock) holds only what the service runs.
    // `--no-check`: type-checking is `deno task check`'s, which `deno task ok` and .ci/run run
    // before the tests; checked again here it held every test file back (docs/testing.md).
    args: [
      "test",
      "-A",
      "--parallel",
      "--no-check",
      `--lock=${TEST_LOCK}`,
      ...order,
      ...Deno.args,
    ],
    env: { TEST_DATABASE_URL: server.url, DENO_JOBS: jobs, ...run.env, ...template.env },
    stdin: "null",
  }).spawn();
  const stop = () => child.kill("SIGTERM");
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  code = (await child.status).code;
  if (code !== 0 && shuffle) {
    console.log(`tests: failed in the order of ${SEED_VARIABLE}=${shuffle.seed}`);
  }
} finally {
  await dropRunDatabases(server.url, run.id);
  await server.stop();
}
Deno.exit(code);
