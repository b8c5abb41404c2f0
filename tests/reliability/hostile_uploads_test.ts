/**
 * Hostile uploads: a generated corpus of non-images dressed as images, polyglots, size limits to
 * the byte, header-only pixel bombs, corrupt images, malformed multipart bodies and lying
 * Content-Length headers on a real socket, then a fast-check run of random bytes and random
 * mutations of valid images. The service must answer a 2xx or the documented 4xx, never a 5xx
 * or a hang, and the bucket and the tables must agree at the end.
 */
import assert from "node:assert/strict";
import fc from "npm:fast-check@4.10.2";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, makeImage, upload, uploadForm } from "../_harness/images.ts";
import { assertBucketMatchesTables } from "../_harness/consistency.ts";
import { assertSafeBytes, statusOf } from "../_harness/responses.ts";
import { concat, te } from "../_harness/bytes.ts";
import { flipBits, pixelBombs } from "../_harness/hostile.ts";
import { rawHttp } from "../_harness/raw_http.ts";
import { within } from "../_harness/waits.ts";

const MAX = 300_000;
const MAX_PIXELS = 4_000_000;
const pool = await ThumbnailPool.start({ size: 2, maxPixels: MAX_PIXELS, timeoutMs: 5000 });
const svc = await startService({
  thumbnails: pool,
  env: { MAX_UPLOAD_BYTES: String(MAX), MAX_IMAGE_PIXELS: String(MAX_PIXELS) },
});
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
addEventListener("unload", () => pool.close());

const ACCEPTED = new Set([200, 201]);
const ANY_ANSWER = new Set([200, 201, 413, 415, 422]);

/** Uploads `bytes`; returns the status and, when accepted, the image. */
async function send(bytes: Uint8Array, opts: { name?: string; type?: string } = {}) {
  const res = await within(upload(svc.app, auth, bytes, [], opts), 15_000, "upload");
  const body = await res.json();
  return { status: res.status, body };
}

/** Every accepted image: both byte routes are images with nosniff, never HTML or SVG. */
async function assertServedSafely(img: { short_id: string; thumbnail_key: string | null }) {
  assert.ok(
    img.thumbnail_key === null || img.thumbnail_key === `thumbnails/${img.short_id}.webp`,
    String(img.thumbnail_key),
  );
  for (const which of ["file", "thumbnail"]) {
    const res = await svc.app.request(`/api/v1/images/${img.short_id}/${which}`);
    assert.equal(res.status, 200, which);
    assertSafeBytes(res, `${img.short_id} ${which}`);
    await res.body?.cancel();
  }
}

Deno.test("text, HTML, SVG and script dressed as images are 415 whatever the name and type", async () => {
  const payloads: Record<string, string> = {
    text: "just some text, not an image",
    html: "<!doctype html><html><body><script>alert(1)</script></body></html>",
    "html after spaces": "   \n\t<html><img src=x onerror=alert(1)>",
    svg: `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>`,
    "svg with xml prolog": `<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>`,
    "svg after a BOM": `\uFEFF<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>`,
    javascript: "alert(document.cookie)//",
    "PNG magic then HTML": "\x89PNG\r\n\x1a\n<html><script>alert(1)</script></html>",
    "RIFF WEBP then HTML": "RIFF\x00\x00\x00\x00WEBP<html><script>x</script></html>",
    "ftyp without avif": "\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isommp41<html>",
  };
  const disguises: [string, string][] = [
    ["cat.png", "image/png"],
    ["cat.jpg", "image/jpeg"],
    ["cat.gif", "image/gif"],
    ["cat.webp", "image/webp"],
    ["cat.svg", "image/svg+xml"],
    ["cat.html", "text/html"],
  ];
  const before = (await svc.db.sql`select count(*)::int as n from images`)[0].n;
  for (const [what, text] of Object.entries(payloads)) {
    // latin1 for the binary magic, UTF-8 otherwise
    const bytes = [...text].every((ch) => ch.charCodeAt(0) <= 0xff)
      ? Uint8Array.from(text, (ch) => ch.charCodeAt(0))
      : te(text);
    for (const [name, type] of disguises) {
      const { status, body } = await send(bytes, { name, type });
      assert.equal(status, 415, `${what} as ${name} ${type}`);
      assert.equal(body.code, "unsupported_image");
    }
  }
  const zero = await send(new Uint8Array(0), { name: "empty.png", type: "image/png" });
  assert.equal(zero.status, 415, "zero bytes");
  const after = (await svc.db.sql`select count(*)::int as n from images`)[0].n;
  assert.equal(after, before, "nothing stored");
});

Deno.test("GIF polyglots carrying HTML are refused or served only as image/gif with nosniff", async () => {
  const html = te("<html><body><script>alert(document.domain)</script></body></html>");
  const cases: Record<string, Uint8Array> = {
    "valid GIF then HTML": concat(await makeImage("gif", 8, 8), html),
    "GIF header and dimensions then HTML": concat(te("GIF89a"), new Uint8Array([1, 0, 1, 0]), html),
    "GIF header, HTML in the comment extension": concat(
      te("GIF89a"),
      new Uint8Array([2, 0, 2, 0, 0, 0, 0, 0x21, 0xfe, html.length > 255 ? 255 : html.length]),
      html.subarray(0, 255),
      new Uint8Array([0, 0x3b]),
    ),
  };
  const stored: string[] = [];
  for (const [what, bytes] of Object.entries(cases)) {
    const { status, body } = await send(bytes, { name: "x.html", type: "text/html" });
    assert.ok([201, 200, 415].includes(status), `${what}: ${status}`);
    if (ACCEPTED.has(status)) {
      stored.push(what);
      assert.equal(body.content_type, "image/gif", what);
      await assertServedSafely(body);
      const res = await svc.app.request(`/api/v1/images/${body.short_id}/file`);
      assert.equal(res.headers.get("content-type"), "image/gif", what);
      assert.match(res.headers.get("content-security-policy") ?? "", /sandbox/);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
      await res.body?.cancel();
    }
  }
  // A valid GIF with bytes after its trailer is an image: it is kept, so the checks of how it is
  // served above really ran.
  assert.ok(stored.includes("valid GIF then HTML"), `stored: ${stored}`);
});

Deno.test("a PNG padded to exactly MAX_UPLOAD_BYTES is 201; one byte more is 413", async () => {
  const png = await makeImage("png", 64, 64);
  const padding = new Uint8Array(MAX - png.length).fill(0x2a);
  const exact = concat(png, padding);
  assert.equal(exact.length, MAX);
  const ok = await send(exact, { name: "big.png", type: "image/png" });
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.equal(ok.body.size_bytes, MAX);
  await assertServedSafely(ok.body);
  const over = await send(concat(exact, new Uint8Array([0])), { name: "big.png" });
  assert.equal(over.status, 413);
  assert.equal(over.body.code, "upload_too_large");
  assert.equal(over.body.max_bytes, MAX);
});

Deno.test("header-only pixel bombs in PNG, GIF, JPEG and WebP are 422 too_many_pixels", async () => {
  const before = (await svc.db.sql`select count(*)::int as n from images`)[0].n;
  for (const [format, bomb] of Object.entries(pixelBombs)) {
    for (const [w, h] of [[60_000, 60_000], [MAX_PIXELS + 1, 1], [2001, 2000]]) {
      if (format !== "png" && format !== "webp" && w > 65_535) continue; // 16-bit fields
      if (format === "webp" && w > 16_777_216) continue; // 24-bit fields
      const { status, body } = await send(bomb(w, h), { name: `bomb.${format}` });
      assert.equal(status, 422, `${format} ${w}x${h}: ${JSON.stringify(body)}`);
      assert.equal(body.code, "too_many_pixels", format);
      assert.equal(body.max_pixels, MAX_PIXELS);
    }
  }
  const after = (await svc.db.sql`select count(*)::int as n from images`)[0].n;
  assert.equal(after, before);
});

Deno.test("truncated and bit-flipped JPEG, PNG, GIF and WebP: 201 with or without a thumbnail, or 4xx, never 5xx", async () => {
  const headerBytes = { jpeg: 2, png: 8, gif: 6, webp: 12 };
  for (const format of ["jpeg", "png", "gif", "webp"] as const) {
    const whole = await makeImage(format, 320, 240);
    const variants: [string, Uint8Array, Set<number>][] = [];
    // Cut inside the magic or before the dimensions: not an image.
    variants.push([
      `${format} cut to its magic`,
      whole.slice(0, headerBytes[format]),
      new Set([415]),
    ]);
    // Cut after the header: accepted, the thumbnail may fail.
    for (const frac of [0.25, 0.5, 0.9]) {
      const cut = Math.max(64, Math.floor(whole.length * frac));
      variants.push([`${format} cut at ${cut}/${whole.length}`, whole.slice(0, cut), ACCEPTED]);
    }
    variants.push([`${format} minus its last byte`, whole.slice(0, -1), ACCEPTED]);
    // Flips in the body keep the header readable; flips anywhere may break it.
    for (let seed = 1; seed <= 3; seed++) {
      const flipped = flipBits(whole, 8, Math.min(64, whole.length - 1), seed);
      variants.push([`${format} bit-flipped body #${seed}`, flipped, ACCEPTED]);
      variants.push([
        `${format} bit-flipped anywhere #${seed}`,
        flipBits(whole, 4, 0, seed * 7),
        ANY_ANSWER,
      ]);
    }
    for (const [what, bytes, allowed] of variants) {
      const { status, body } = await send(bytes, { name: `x.${format}`, type: `image/${format}` });
      assert.ok(allowed.has(status), `${what}: ${status} ${JSON.stringify(body)}`);
      if (ACCEPTED.has(status)) await assertServedSafely(body);
    }
  }
});

Deno.test("malformed multipart bodies: no file 422, two files 422, huge field 413, no boundary 400", async () => {
  const png = await makeImage("png", 16, 16);
  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    within(
      Promise.resolve(svc.app.request("/api/v1/images", {
        method: "POST",
        headers: { ...auth, ...headers },
        body,
      })),
      10_000,
      "multipart",
    );

  const raw = (boundary: string, parts: string) =>
    te(parts.replaceAll("\n", "\r\n").replaceAll("BOUNDARY", boundary));
  const noFile = raw(
    "b1",
    `--BOUNDARY\nContent-Disposition: form-data; name="tags"\n\ncat\n--BOUNDARY--\n`,
  );
  let res = await post(noFile, { "content-type": "multipart/form-data; boundary=b1" });
  assert.equal(res.status, 422);
  assert.match((await res.json()).detail, /file/);

  const fileAsText = raw(
    "b1",
    `--BOUNDARY\nContent-Disposition: form-data; name="file"\n\nnot a file\n--BOUNDARY--\n`,
  );
  res = await post(fileAsText, { "content-type": "multipart/form-data; boundary=b1" });
  assert.equal(res.status, 422, "a text field named file");
  await res.body?.cancel();

  const two = uploadForm(png);
  two.append("file", new File([await makeImage("png", 16, 16) as BlobPart], "b.png"));
  res = await post(two);
  assert.equal(res.status, 422);
  assert.match((await res.json()).detail, /one file/);

  const huge = uploadForm(png);
  huge.append("tags", "a".repeat(MAX + 70_000));
  res = await post(huge);
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, "upload_too_large");

  const form = uploadForm(png);
  const body = new Uint8Array(await new Response(form).arrayBuffer());
  for (const type of ["multipart/form-data", "multipart/form-data;", "image/png", "text/plain"]) {
    res = await post(body, { "content-type": type });
    assert.equal(res.status, 400, type);
    assert.match((await res.json()).detail, /multipart/);
  }
  res = await post(body, { "content-type": "multipart/form-data; boundary=not-the-one-used" });
  assert.ok(res.status >= 400 && res.status < 500, `wrong boundary: ${res.status}`);
  await res.body?.cancel();
  res = await post(te("--x\r\ngarbage without headers\r\n"), {
    "content-type": "multipart/form-data; boundary=x",
  });
  assert.ok(res.status >= 400 && res.status < 500, `garbage: ${res.status}`);
  await res.body?.cancel();
});

Deno.test("a lying Content-Length on a real socket is a 4xx or a held connection that blocks nobody, never a 5xx or a hang", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    svc.app.fetch,
  );
  try {
    const port = server.addr.port;
    const boundary = "lyingboundary";
    const png = await makeImage("png", 32, 32);
    const body = concat(
      te(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n` +
          `Content-Type: image/png\r\n\r\n`,
      ),
      png,
      te(`\r\n--${boundary}--\r\n`),
    );
    const head = (length: number) =>
      `POST /api/v1/images HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: ${auth.authorization}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${length}\r\nConnection: close\r\n\r\n`;

    // Shorter than the body: the form is cut before its closing boundary.
    const shorter = await rawHttp(port, head(body.length - 40), body, { timeoutMs: 5000 });
    assert.equal(shorter.timedOut, false, "shorter: hung");
    assert.ok(shorter.status !== null, `shorter: no status: ${shorter.text}`);
    assert.ok(shorter.status >= 400 && shorter.status < 500, `shorter: ${shorter.text}`);

    // Longer than the body, and the client stops sending: the server sees the end too soon.
    const longer = await rawHttp(port, head(body.length + 4096), body, {
      closeWrite: true,
      timeoutMs: 5000,
    });
    assert.equal(longer.timedOut, false, "longer: hung");
    // The end came before the promised length: the form cannot be read, a 400 (no condition:
    // an assertion under `if (answered)` would pass were nothing ever answered).
    assert.equal(longer.status, 400, `longer: ${longer.text}`);

    // Longer, and the client just waits: it may hold its connection; the service goes on.
    const stalled = rawHttp(port, head(body.length + 4096), body, { timeoutMs: 1000 });
    const meanwhile = await upload(svc.app, auth, await makeImage("png", 32, 32));
    assert.equal(meanwhile.status, 201);
    await meanwhile.body?.cancel();
    // Held, not answered: the service waits for the promised bytes (the client gave up after
    // 1 s), and meanwhile served the upload above.
    const s = await stalled;
    assert.deepEqual([s.status, s.timedOut], [null, true], `stalled: ${s.text}`);

    // A truthful request on the same server still works.
    const honest = await rawHttp(port, head(body.length), body, { timeoutMs: 10_000 });
    assert.ok(honest.status === 201 || honest.status === 200, honest.text);
  } finally {
    await server.shutdown();
  }
});

Deno.test("fast-check: random bytes and mutated images answer 200, 201, 413, 415 or 422", async () => {
  const bases = await Promise.all([
    makeImage("jpeg", 48, 32),
    makeImage("png", 40, 30),
    makeImage("gif", 24, 24),
    makeImage("webp", 32, 32),
    makeImage("avif", 16, 16),
  ]);
  const magics = [
    [0xff, 0xd8, 0xff],
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    [...te("GIF89a")],
    [...te("RIFF"), 0, 0, 0, 0, ...te("WEBPVP8 ")],
  ];
  const check = async (bytes: Uint8Array) => {
    const res = await within(upload(svc.app, auth, bytes), 15_000, "fuzzed upload");
    const status = res.status;
    const body = await res.json();
    if (!ANY_ANSWER.has(status)) {
      throw new Error(`status ${status} ${JSON.stringify(body)} for ${bytes.length} bytes`);
    }
    if (ACCEPTED.has(status)) await assertServedSafely(body);
  };

  const randomBytes = fc.oneof(
    fc.uint8Array({ maxLength: 2048 }),
    fc.tuple(fc.constantFrom(...magics), fc.uint8Array({ maxLength: 512 }))
      .map(([m, rest]) => concat(new Uint8Array(m), rest)),
  );
  await fc.assert(fc.asyncProperty(randomBytes, check), { numRuns: 100 });

  const mutation = fc.record({
    base: fc.nat({ max: bases.length - 1 }),
    writes: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }),
    cut: fc.option(fc.nat(), { nil: undefined }),
    insert: fc.option(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 64 })), {
      nil: undefined,
    }),
  }).map(({ base, writes, cut, insert }) => {
    let b = bases[base].slice();
    for (const [at, v] of writes) b[at % b.length] = v;
    if (insert) {
      const at = insert[0] % b.length;
      b = concat(b.subarray(0, at), insert[1], b.subarray(at));
    }
    if (cut !== undefined) b = b.slice(0, cut % (b.length + 1));
    return b;
  });
  await fc.assert(fc.asyncProperty(mutation, check), { numRuns: 100 });
});

Deno.test("after all of it: health is 200 and the bucket and the tables agree", async () => {
  const res = await svc.app.request("/api/v1/health");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    status: "ok",
    checks: { database: "ok", storage: "ok" },
  });
  await assertBucketMatchesTables(svc);
  assert.equal(await statusOf(svc.app.request("/api/v1/images?limit=200")), 200);
});
