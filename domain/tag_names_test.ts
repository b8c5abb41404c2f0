import assert from "node:assert/strict";
import {
  filterTerms,
  normalizeTag,
  parseFilterText,
  parseTagFilter,
  parseTagList,
  TagNameError,
  TooManyTagsError,
} from "./tag_names.ts";

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

Deno.test("normalizeTag() refuses a leading -, which means exclusion in a filter", () => {
  assert.throws(() => normalizeTag("-sad"), TagNameError);
  assert.equal(normalizeTag("so-so"), "so-so");
});

Deno.test("parseTagFilter() splits inclusions from -exclusions and caps both together", () => {
  assert.deepEqual(parseTagFilter(["Happy, -Sarcastic", "-loud,happy"]), {
    include: ["happy"],
    exclude: ["sarcastic", "loud"],
  });
  assert.deepEqual(parseTagFilter(["-a"]), { include: [], exclude: ["a"] });
  assert.throws(() => parseTagFilter(["-"]), TagNameError);
  const half = Array.from({ length: 25 }, (_, i) => `t${i}`);
  const full = [...half, ...half.map((t) => `-x${t}`)];
  assert.equal(filterTerms(parseTagFilter(full)).length, 50);
  assert.throws(() => parseTagFilter([...full, "-one_more"]), TooManyTagsError);
});

Deno.test("parseFilterText() keeps exclusions and drops what cannot be a tag", () => {
  assert.deepEqual(parseFilterText(" Happy , - Sad Face,a/b,,-"), ["happy", "-sad_face"]);
});
