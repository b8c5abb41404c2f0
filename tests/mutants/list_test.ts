import assert from "node:assert/strict";
import { applyMutation, checkList, failingTests, occurrences, selectMutations } from "./list.ts";

const files: Record<string, string> = {
  "api/a.ts": "if (n >= max) lock();\nif (n >= max) lock();\n",
  "api/b.ts": "return { start: Math.max(0, size - suffix) };\n",
  "tests/b_test.ts": "",
};
const read = (path: string) => files[path] ?? null;
const entry = (over: Record<string, unknown> = {}) => ({
  id: "range-negative-start",
  file: "api/b.ts",
  find: "Math.max(0, size - suffix)",
  replace: "size - suffix",
  description: "a suffix longer than the file gives a negative start",
  tests: ["tests/b_test.ts"],
  ...over,
});

Deno.test("checkList accepts an entry whose find occurs exactly once", () => {
  const { mutations, problems } = checkList([entry()], read);
  assert.deepEqual(problems, []);
  assert.equal(mutations.length, 1);
});

Deno.test("checkList names every problem: a find twice or never, a missing file, a reused id", () => {
  const { problems } = checkList([
    entry(),
    entry({ file: "api/a.ts", find: "if (n >= max)", replace: "if (n > max)" }),
    entry({ id: "gone", find: "Math.min(" }),
    entry({ id: "no-file", file: "api/c.ts" }),
    entry({ id: "no-test", tests: ["tests/c_test.ts"] }),
  ], read);
  assert.deepEqual(problems, [
    "range-negative-start: the id is used twice",
    'range-negative-start: the find string occurs 2 times in api/a.ts, not once: "if (n >= max)"',
    'gone: the find string occurs 0 times in api/b.ts, not once: "Math.min("',
    "no-file: api/c.ts does not exist",
    "no-test: test file tests/c_test.ts does not exist",
  ]);
});

Deno.test("checkList refuses a malformed entry: an absolute path, a no-op, an unknown field", () => {
  for (
    const bad of [entry({ file: "/etc/passwd" }), entry({ replace: "Math.max(0, size - suffix)" })]
  ) {
    const { mutations, problems } = checkList([bad], read);
    assert.equal(mutations.length, 0);
    assert.equal(problems.length, 1, JSON.stringify(problems));
  }
  assert.equal(checkList([entry({ line: 42 })], read).problems.length, 1);
});

Deno.test("applyMutation replaces the one occurrence; occurrences counts overlapping ones", () => {
  assert.equal(
    applyMutation(files["api/b.ts"], entry()),
    "return { start: size - suffix };\n",
  );
  assert.equal(occurrences("aaa", "aa"), 2);
  assert.throws(() => applyMutation("x", { find: "y", replace: "z" }));
});

Deno.test("selectMutations matches ids and files; no filter selects all", () => {
  const list = checkList([entry(), entry({ id: "other", file: "api/b.ts" })], read).mutations;
  assert.deepEqual(selectMutations(list, ["negative"]).map((m) => m.id), ["range-negative-start"]);
  assert.deepEqual(selectMutations(list, ["api/b"]).map((m) => m.id), [
    "range-negative-start",
    "other",
  ]);
  assert.equal(selectMutations(list, []).length, 2);
  assert.equal(selectMutations(list, ["nothing"]).length, 0);
});

Deno.test("failingTests reads the names from deno test's FAILURES section", () => {
  const output = [
    "a test => ./tests/x_test.ts:3:6",
    "",
    " ERRORS ",
    "",
    "a test => ./tests/x_test.ts:3:6",
    "error: AssertionError",
    "",
    " FAILURES ",
    "",
    "a test => ./tests/x_test.ts:3:6",
    "GET /file: bytes=-0 is 416 => ./tests/delivery_test.ts:197:6",
    "",
    "FAILED | 12 passed | 2 failed (2s)",
  ].join("\n");
  assert.deepEqual(failingTests(output), ["a test", "GET /file: bytes=-0 is 416"]);
  assert.deepEqual(failingTests("ok | 3 passed | 0 failed"), []);
});
