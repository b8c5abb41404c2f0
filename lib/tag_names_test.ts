import assert from "node:assert/strict";
import { normalizeTag, parseTagList, TagNameError } from "./tag_names.ts";

Deno.test("normalizeTag() trims, lower-cases, NFC-normalises and joins whitespace with _", () => {
  assert.equal(normalizeTag("  Happy   Cat\t"), "happy_cat");
  assert.equal(normalizeTag("Cafe\u0301"), "caf\u00e9");
  assert.equal(normalizeTag("ÜBER"), "über");
  assert.equal(normalizeTag("x".repeat(64)), "x".repeat(64));
});

Deno.test("normalizeTag() refuses empty, overlong, comma, slash and control characters", () => {
  for (const bad of ["", "   ", "x".repeat(65), "a,b", "a/b", "a\\b", "a\u0000b", "a\u007fb"]) {
    assert.throws(() => normalizeTag(bad), TagNameError, JSON.stringify(bad));
  }
});

Deno.test("parseTagList() splits commas, merges repeats and de-duplicates in order", () => {
  assert.deepEqual(parseTagList(["cat, Dog", "cat", "fish,,", " "]), ["cat", "dog", "fish"]);
  assert.deepEqual(parseTagList([]), []);
  assert.throws(() => parseTagList([Array.from({ length: 51 }, (_, i) => `t${i}`).join(",")]));
});
