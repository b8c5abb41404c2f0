import assert from "node:assert/strict";
import { chooseShuffleSeed } from "./_harness/shuffle.ts";

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

Deno.test("chooseShuffleSeed() takes TEST_SHUFFLE_SEED, else a random seed, and leaves --shuffle alone", () => {
  assert.deepEqual(chooseShuffleSeed("4242", []), { seed: 4242, given: true });
  assert.deepEqual(chooseShuffleSeed(" 0 ", ["tests/a_test.ts"]), { seed: 0, given: true });
  assert.deepEqual(chooseShuffleSeed(undefined, [], () => 0.5), { seed: 2 ** 30, given: false });
  assert.deepEqual(chooseShuffleSeed("", [], () => 0), { seed: 0, given: false });
  for (const bad of ["-1", "1.5", "abc", "2147483648", "99999999999"]) {
    const choice = chooseShuffleSeed(bad, []);
    assert.ok(choice && "error" in choice, bad);
    assert.match(choice.error, /^TEST_SHUFFLE_SEED must be a whole number/);
  }
  assert.equal(chooseShuffleSeed("7", ["--shuffle=9"]), null);
  assert.equal(chooseShuffleSeed(undefined, ["--shuffle"]), null);
});

Deno.test("deno task test prints its shuffle seed and files at once, and refuses a bad seed before loading any test", async () => {
  const run = async (seed: string) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...runTests, "tests/_sees_its_database.ts"],
      cwd: root,
      // DENO_JOBS empty: the run's default, not the one this run gave its files.
      env: { TEST_SHUFFLE_SEED: seed, NO_COLOR: "1", DENO_JOBS: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return { code: out.code, text };
  };
  const bad = await run("soon");
  assert.equal(bad.code, 2, bad.text);
  assert.match(bad.text, /TEST_SHUFFLE_SEED must be a whole number/);
  assert.doesNotMatch(bad.text, /Check|running/, "no module was loaded");
  const good = await run("4242");
  assert.equal(good.code, 0, good.text);
  assert.match(good.text, /tests: shuffled with seed 4242 \(TEST_SHUFFLE_SEED\)/);
  assert.match(good.text, /ok \| 1 passed \| 0 failed/);
  // One file more than there are cores (docs/testing.md: the figures).
  const jobs = navigator.hardwareConcurrency + 1;
  assert.match(good.text, new RegExp(`tests: ${jobs} files at once \\(DENO_JOBS\\)`));
});
