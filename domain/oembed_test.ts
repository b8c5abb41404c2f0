import assert from "node:assert/strict";
import { fitWithin, shortIdOfUrl } from "./oembed.ts";
import { parseDirectName, shareLinks } from "./share_links.ts";
import { thumbnailSize } from "./thumbnail_size.ts";

Deno.test("fitWithin() scales down to the tighter bound, keeps the ratio, never enlarges", () => {
  const s = { width: 1200, height: 800 };
  assert.deepEqual(fitWithin(s), s);
  assert.deepEqual(fitWithin(s, 600), { width: 600, height: 400 });
  assert.deepEqual(fitWithin(s, undefined, 200), { width: 300, height: 200 });
  assert.deepEqual(fitWithin(s, 600, 100), { width: 150, height: 100 });
  assert.deepEqual(fitWithin(s, 5000, 5000), s);
  assert.deepEqual(fitWithin({ width: 1000, height: 3 }, 10), { width: 10, height: 1 });
  assert.deepEqual(fitWithin({ width: 333, height: 333 }, 100), { width: 100, height: 100 });
});

Deno.test("shortIdOfUrl() reads pages and direct links of this host only", () => {
  const o = "https://reactions.example.com";
  assert.deepEqual(shortIdOfUrl(`${o}/i/aZ3kP9qX`, o), { shortId: "aZ3kP9qX" });
  assert.deepEqual(shortIdOfUrl(`${o}/i/aZ3kP9qX/?x=1#y`, o), { shortId: "aZ3kP9qX" });
  assert.deepEqual(shortIdOfUrl(`http://reactions.example.com/aZ3kP9qX.gif`, o), {
    shortId: "aZ3kP9qX",
    ext: "gif",
  });
  for (
    const url of [
      "https://other.example/i/aZ3kP9qX",
      "https://reactions.example.com:444/i/aZ3kP9qX",
      "https://reactions.example.com.evil/i/aZ3kP9qX",
      "https://reactions.example.com/i/aZ3kP9q",
      "https://reactions.example.com/x/i/aZ3kP9qX",
      "https://reactions.example.com/api/v1/images/aZ3kP9qX/file",
      "javascript:alert(1)",
      "",
    ]
  ) {
    assert.equal(shortIdOfUrl(url, o), null, url);
  }
});

Deno.test("parseDirectName() splits a short ID and an extension", () => {
  assert.deepEqual(parseDirectName("aZ3kP9qX.webp"), { shortId: "aZ3kP9qX", ext: "webp" });
  assert.equal(parseDirectName("aZ3kP9qX"), null);
  assert.equal(parseDirectName("aZ3kP9qX.png.png"), null);
});

Deno.test("shareLinks() previews the original up to 8 MB, the thumbnail above", () => {
  const image = {
    short_id: "aZ3kP9qX",
    content_type: "image/gif",
    width: 900,
    height: 300,
    size_bytes: 8 * 1024 * 1024,
    thumbnail_key: "thumbnails/aZ3kP9qX.webp",
  };
  const o = "https://r.example";
  const small = shareLinks(o, image);
  assert.equal(small.direct, `${o}/aZ3kP9qX.gif`);
  assert.equal(small.page, `${o}/i/aZ3kP9qX`);
  assert.deepEqual(small.preview, {
    url: small.direct,
    type: "image/gif",
    width: 900,
    height: 300,
  });
  const big = shareLinks(o, { ...image, size_bytes: image.size_bytes + 1 });
  assert.deepEqual(big.preview, {
    url: `${o}/api/v1/images/aZ3kP9qX/thumbnail`,
    type: "image/webp",
    width: 400,
    height: 133,
  });
  // With no thumbnail, the thumbnail route serves the original: so does the preview.
  const none = shareLinks(o, { ...image, size_bytes: 9e6, thumbnail_key: null });
  assert.equal(none.preview.url, none.direct);
});

Deno.test("thumbnailSize() matches sharp's fit-inside sizes", () => {
  assert.deepEqual(thumbnailSize(900, 300), { width: 400, height: 133 });
  assert.deepEqual(thumbnailSize(1200, 800), { width: 400, height: 267 });
  assert.deepEqual(thumbnailSize(300, 200), { width: 300, height: 200 });
  assert.deepEqual(thumbnailSize(5000, 2), { width: 400, height: 1 });
});
