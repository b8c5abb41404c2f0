import assert from "node:assert/strict";
import { formatBytes, formatType, libraryHref, loginHref, parseTagText, safeNext } from "./ui.ts";

Deno.test("parseTagText() normalises like the API and drops impossible names", () => {
  assert.deepEqual(parseTagText(" Cat , SUR  prised,,cat, a/b, "), ["cat", "sur_prised"]);
  assert.deepEqual(parseTagText(null), []);
  assert.deepEqual(parseTagText("x".repeat(65)), []);
});

Deno.test("safeNext() keeps only same-origin paths", () => {
  assert.equal(safeNext("/upload"), "/upload");
  assert.equal(safeNext("/?tags=cat,dog"), "/?tags=cat,dog");
  for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example", "", null, "x"]) {
    assert.equal(safeNext(bad), "/", String(bad));
  }
  assert.equal(safeNext("/a\nb"), "/");
});

Deno.test("loginHref() and libraryHref() encode their values", () => {
  assert.equal(loginHref("/upload"), "/login?next=/upload");
  assert.equal(loginHref("/?tags=a&b"), "/login?next=/%3Ftags%3Da%26b");
  assert.equal(loginHref("//evil"), "/login?next=/");
  assert.equal(libraryHref(["r&b?", "cat"]), "/?tags=r%26b%3F,cat");
  assert.equal(libraryHref([]), "/");
  // The best match first: only a search with words has that order.
  assert.equal(
    libraryHref(["cat"], "so fine", "c1", "", "relevance"),
    "/?tags=cat&q=so%20fine&sort=relevance&cursor=c1",
  );
  assert.equal(libraryHref(["cat"], "", null, "", "relevance"), "/?tags=cat");
});

Deno.test("formatBytes() and formatType() read well", () => {
  assert.equal(formatBytes(532), "532 bytes");
  assert.equal(formatBytes(1536), "1.5 KB");
  assert.equal(formatBytes(20971520), "20 MB");
  assert.equal(formatType("image/jpeg"), "JPEG");
  assert.equal(formatType("image/webp"), "WEBP");
});
