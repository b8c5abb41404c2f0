import assert from "node:assert/strict";
import { clip } from "./search.ts";

Deno.test("clip keeps at most max code points, never half of one, trimmed", () => {
  assert.equal(clip("  this is fine  ", 60), "this is fine");
  assert.equal(clip("this is fine", 7), "this is");
  assert.equal(clip("this is fine", 8), "this is");
  // Each emoji is two UTF-16 units and one code point.
  assert.equal(clip("😀😀😀😀😀", 3), "😀😀😀");
  assert.equal(clip("a😀b", 2), "a😀");
  assert.equal(clip("😀😀", 2), "😀😀");
  assert.equal(clip("", 5), "");
  assert.equal(clip("abc", 0), "");
});
