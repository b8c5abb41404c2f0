/**
 * What the byte routes serve, whatever was uploaded: only sniffed image types (never HTML or
 * SVG), always with nosniff (200, 206, 304, 416 and HEAD), and hostile short IDs (path
 * traversal, SQL, overlong, control characters) are a plain 404 on every route that takes one.
 */
import assert from "node:assert/strict";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import { assertSafeBytes, IMAGE_TYPES } from "../_harness/responses.ts";
import { concat, te } from "../_harness/bytes.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000, timeoutMs: 10_000 });
const svc = await startService({ thumbnails: pool });
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
addEventListener("unload", () => pool.close());

interface Uploaded {
  short_id: string;
  hash: string;
  content_type: string;
  size_bytes: number;
  thumbnail_key: string | null;
}

const html = te("<html><script>alert(document.domain)</script></html>");
const svgInGif = te(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`);
const uploads: [string, Uint8Array, string, string][] = [
  ["jpeg", await makeImage("jpeg", 300, 200), "a.jpg", "image/jpeg"],
  ["png", await makeImage("png", 300, 200), "a.png", "image/png"],
  ["gif", await makeImage("gif", 60, 40), "a.gif", "image/gif"],
  ["webp", await makeImage("webp", 300, 200), "a.webp", "image/webp"],
  ["avif", await makeImage("avif", 64, 64), "a.avif", "image/avif"],
  [
    "gif+html polyglot as text/html",
    concat(await makeImage("gif", 8, 8), html),
    "x.html",
    "text/html",
  ],
  [
    "gif header+svg as image/svg+xml",
    concat(te("GIF89a\x02\x00\x02\x00"), svgInGif),
    "x.svg",
    "image/svg+xml",
  ],
  ["truncated png", (await makeImage("png", 400, 300)).slice(0, 300), "t.png", "image/png"],
];
const images: [string, Uploaded][] = [];
for (const [what, bytes, name, type] of uploads) {
  const res = await upload(svc.app, auth, bytes, [], { name, type });
  assert.ok(res.status === 201 || res.status === 415, `${what}: ${res.status}`);
  if (res.status === 201) images.push([what, await res.json()]);
  else await res.body?.cancel();
}

Deno.test("nothing uploaded is served as HTML or SVG: every file and thumbnail is an image type", async () => {
  assert.ok(images.length >= 6, `only ${images.length} accepted`);
  for (const [what, img] of images) {
    assert.ok(IMAGE_TYPES.has(img.content_type), `${what}: stored as ${img.content_type}`);
    for (const which of ["file", "thumbnail"]) {
      for (const method of ["GET", "HEAD"]) {
        const res = await svc.app.request(`/api/v1/images/${img.short_id}/${which}`, { method });
        assert.equal(res.status, 200, `${what} ${method} ${which}`);
        assertSafeBytes(res, `${what} ${method} ${which}`);
        assert.match(res.headers.get("content-security-policy") ?? "", /sandbox/, what);
        if (which === "file") assert.equal(res.headers.get("content-type"), img.content_type);
        await res.body?.cancel();
      }
    }
  }
  // The polyglots, if accepted, are GIFs and nothing else.
  for (const [what, img] of images.filter(([w]) => w.includes("polyglot") || w.includes("+svg"))) {
    assert.equal(img.content_type, "image/gif", what);
  }
});

Deno.test("nosniff on 206, 304 and 416 byte responses too; error answers are JSON, never HTML", async () => {
  for (const [what, img] of images) {
    const file = `/api/v1/images/${img.short_id}/file`;
    const thumb = `/api/v1/images/${img.short_id}/thumbnail`;
    const partial = await svc.app.request(file, { headers: { range: "bytes=0-3" } });
    assert.equal(partial.status, 206, what);
    assertSafeBytes(partial, `${what} 206`);
    assert.equal((await partial.arrayBuffer()).byteLength, 4);

    const ranged = await svc.app.request(file, { method: "HEAD", headers: { range: "bytes=1-" } });
    assert.equal(ranged.status, 206, `${what} HEAD range`);
    assertSafeBytes(ranged, `${what} HEAD 206`);

    for (const [url, etag] of [[file, `"${img.hash}"`], [thumb, null]] as const) {
      const first = await svc.app.request(url);
      const tag = etag ?? first.headers.get("etag")!;
      await first.body?.cancel();
      const res = await svc.app.request(url, { headers: { "if-none-match": tag } });
      assert.equal(res.status, 304, `${what} ${url}`);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${what} 304`);
      const type = res.headers.get("content-type");
      assert.ok(type === null || IMAGE_TYPES.has(type), `${what} 304 type ${type}`);
      await res.body?.cancel();
    }

    const bad = await svc.app.request(file, { headers: { range: `bytes=${img.size_bytes}-` } });
    assert.equal(bad.status, 416, what);
    assert.equal(bad.headers.get("x-content-type-options"), "nosniff", `${what} 416`);
    assert.ok(!/html|svg/.test(bad.headers.get("content-type") ?? ""), `${what} 416 type`);
    await bad.body?.cancel();
  }
  for (const which of ["file", "thumbnail"]) {
    const res = await svc.app.request(`/api/v1/images/ZZZZZZZZ/${which}`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(await res.json(), { detail: "Image not found" });
  }
});

const hostileIds = [
  "../../../../etc/passwd",
  "..%2F..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2fimages",
  "..%5C..%5Cwindows",
  "images%2F..%2F..%2Fsecret",
  "' OR '1'='1",
  "1;DROP TABLE images;--",
  "aaaaaaa'",
  "%27%20or%201%3D1--",
  "AAAAAAA%00",
  "%00%00%00%00%00%00%00%00",
  "AAAA%0d%0aX-Injected:%201",
  "ÄÄÄÄÄÄÄÄ",
  "𝔸𝔸𝔸𝔸𝔸𝔸𝔸𝔸",
  "AAAAAAA.",
  "AAAAAAAAA",
  "A".repeat(20_000),
  "%".repeat(9),
  "$%7Bjndi:ldap://x/a%7D",
];

Deno.test("hostile short IDs are 404 on detail, file, thumbnail, PATCH and DELETE", async () => {
  const before = await svc.db.sql`select short_id from images order by short_id`;
  const json = { ...auth, "content-type": "application/json" };
  for (const id of hostileIds) {
    const calls: [string, string, RequestInit][] = [
      ["GET detail", `/api/v1/images/${id}`, {}],
      ["GET file", `/api/v1/images/${id}/file`, {}],
      ["HEAD file", `/api/v1/images/${id}/file`, { method: "HEAD" }],
      ["GET thumbnail", `/api/v1/images/${id}/thumbnail`, {}],
      [
        "PATCH tags",
        `/api/v1/images/${id}/tags`,
        { method: "PATCH", headers: json, body: JSON.stringify({ add: ["x"] }) },
      ],
      ["DELETE", `/api/v1/images/${id}`, { method: "DELETE", headers: auth }],
    ];
    for (const [what, path, init] of calls) {
      const res = await svc.app.request(path, init);
      assert.equal(res.status, 404, `${what} ${JSON.stringify(id.slice(0, 60))}`);
      const type = res.headers.get("content-type") ?? "";
      // A raw "../" is resolved by the URL parser before routing: such a path may leave /api/.
      const underApi = new URL(path, "http://x").pathname.startsWith("/api/");
      if (init.method !== "HEAD" && underApi) {
        assert.match(type, /^application\/json/, `${what} ${id.slice(0, 60)}`);
        const body = await res.text();
        assert.ok(!/select|insert|postgres|syntax|stack|at \w+ \(/i.test(body), body);
      } else {
        await res.body?.cancel();
      }
    }
  }
  const after = await svc.db.sql`select short_id from images order by short_id`;
  assert.deepEqual([...after], [...before], "nothing was deleted or changed");
  const [tag] = await svc.db.sql`select count(*)::int as n from tags where name = 'x'`;
  assert.equal(tag.n, 0, "no tag was added through a hostile id");
});
