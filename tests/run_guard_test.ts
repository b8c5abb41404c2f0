import assert from "node:assert/strict";

const root = new URL("..", import.meta.url).pathname;

Deno.test("deno task test refuses a non-PostgreSQL database URL before loading any test", async () => {
  for (const url of ["sqlite:///tmp/x.db", "mysql://root@localhost/test"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "tests/run.ts", "tests/this_file_does_not_exist_test.ts"],
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
