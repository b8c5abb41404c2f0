import assert from "node:assert/strict";
import { Hono } from "hono";
import { gzipSync } from "node:zlib";
import { IMMUTABLE, serveStatic } from "./static.ts";

async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "static_test_" });
  await Deno.writeTextFile(`${dir}/boot-ABCD1234.js`, "console.log(1)");
  await Deno.writeTextFile(`${dir}/app-ABCD1234.css`, "body{}");
  await Deno.writeFile(`${dir}/app-ABCD1234.css.gz`, gzipSync(new TextEncoder().encode("body{}")));
  const app = new Hono();
  app.get("/_static/:file", serveStatic(dir));
  return { dir, app };
}

Deno.test("serveStatic() serves /_static/ files immutable with their content type", async () => {
  const { dir, app } = await fixture();
  try {
    const res = await app.request("/_static/boot-ABCD1234.js");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Cache-Control"), IMMUTABLE);
    assert.equal(res.headers.get("Cache-Control"), "public, max-age=31536000, immutable");
    assert.equal(res.headers.get("Content-Type"), "text/javascript; charset=utf-8");
    assert.equal(res.headers.get("X-Content-Type-Options"), "nosniff");
    assert.equal(await res.text(), "console.log(1)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveStatic() sends the gzip sibling to clients that accept it", async () => {
  const { dir, app } = await fixture();
  try {
    const plain = await app.request("/_static/app-ABCD1234.css");
    assert.equal(plain.headers.get("Content-Encoding"), null);
    assert.equal(await plain.text(), "body{}");
    const gz = await app.request("/_static/app-ABCD1234.css", {
      headers: { "Accept-Encoding": "gzip, br" },
    });
    assert.equal(gz.headers.get("Content-Encoding"), "gzip");
    assert.equal(gz.headers.get("Content-Type"), "text/css; charset=utf-8");
    const body = new Uint8Array(await gz.arrayBuffer());
    assert.deepEqual([body[0], body[1]], [0x1f, 0x8b]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serveStatic() answers 404 for missing, unknown-type and traversal paths", async () => {
  const { dir, app } = await fixture();
  try {
    for (const path of ["/_static/nope-1.js", "/_static/boot-ABCD1234.exe", "/_static/..%2Fx.js"]) {
      const res = await app.request(path);
      assert.equal(res.status, 404, path);
      await res.body?.cancel();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
