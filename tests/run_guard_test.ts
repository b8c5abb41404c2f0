import assert from "node:assert/strict";

const root = new URL("..", import.meta.url).pathname;
/** `deno task test`'s arguments after `deno` (its lock flag included). */
const { tasks } = JSON.parse(Deno.readTextFileSync(`${root}deno.json`));
const runTests = String(tasks.test).split(" ").slice(1);

Deno.test("deno task test refuses a non-PostgreSQL database URL before loading any test", async () => {
  for (const url of ["sqlite:///tmp/x.db", "mysql://root@localhost/test"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...runTests, "tests/this_file_does_not_exist_test.ts"],
      cwd: root,
      env: { TEST_DATABASE_URL: url },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, /only against PostgreSQL/);
    assert.equal(
      new TextDecoder().decode(out.stdout).includes("Check"),
      false,
      "no module was loaded",
    );
  }
});

Deno.test("deno task test with no database URL runs on an embedded PostgreSQL and removes it", async () => {
  // A TMPDIR of our own shows what the run leaves behind; a Docker socket that is not there
  // rules out the container fallback.
  const tmp = await Deno.makeTempDir({ prefix: "board-runner-" });
  try {
    const env: Record<string, string> = {
      TMPDIR: tmp,
      DOCKER_HOST: `unix://${tmp}/no-docker.sock`,
      NO_COLOR: "1",
    };
    for (const key of ["PATH", "HOME", "DENO_DIR"]) {
      const value = Deno.env.get(key);
      if (value) env[key] = value;
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...runTests, "tests/_sees_its_database.ts"],
      cwd: root,
      clearEnv: true,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, /tests: PostgreSQL from embedded/);
    assert.match(text, /server: PostgreSQL 18\./);
    assert.match(text, /ok \| 1 passed \| 0 failed/);
    assert.deepEqual([...Deno.readDirSync(tmp)], [], "the embedded cluster is removed");
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
