/**
 * `deno task test`: checks the database URL before any test module is loaded (anything that is
 * not PostgreSQL stops the run with a clear message and a non-zero exit), resolves the test
 * database, then runs `deno test` with TEST_DATABASE_URL pointing at it.
 * Extra arguments are passed to `deno test` (for example a single file).
 */
import { checkDatabaseUrl, givenDatabaseUrl, resolveTestDatabase } from "./_harness/resolve_db.ts";

const refusal = checkDatabaseUrl(givenDatabaseUrl());
if (refusal) {
  console.error(refusal);
  Deno.exit(2);
}

const server = await resolveTestDatabase();
console.log(`tests: PostgreSQL from ${server.source}`);
let code = 1;
try {
  const args = Deno.args.length ? Deno.args : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--parallel", ...args],
    env: { TEST_DATABASE_URL: server.url },
    stdin: "null",
  }).spawn();
  const stop = () => child.kill("SIGTERM");
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  code = (await child.status).code;
} finally {
  await server.stop();
}
Deno.exit(code);
