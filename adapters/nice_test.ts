import assert from "node:assert/strict";
import { niceWanted, NO_NICE_VARIABLE } from "./nice.ts";
import { lowersPriority, NO_NICE_ARG } from "./ocr/priority.ts";

const env = (value?: string) => ({ get: (key: string) => key === NO_NICE_VARIABLE ? value : "1" });

Deno.test("niceWanted() is false only for TEST_NO_NICE=1, and true where the environment is closed", () => {
  assert.equal(NO_NICE_VARIABLE, "TEST_NO_NICE");
  assert.equal(niceWanted(env("1")), false);
  for (const value of [undefined, "", "0", "true", " 1"]) {
    assert.equal(niceWanted(env(value)), true);
  }
  const closed = {
    get(): string {
      throw new Deno.errors.NotCapable("Requires env access");
    },
  };
  assert.equal(niceWanted(closed), true);
});

Deno.test("the OCR process lowers its priority unless started with --no-nice", () => {
  assert.equal(NO_NICE_ARG, "--no-nice");
  assert.equal(lowersPriority([]), true);
  assert.equal(lowersPriority(["--nice"]), true);
  assert.equal(lowersPriority(["--no-nice"]), false);
});
