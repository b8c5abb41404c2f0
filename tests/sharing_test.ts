/**
 * Sharing into chats (issue 18): direct links `/{short_id}.{ext}` for every stored type, the
 * link-preview tags of `/i/{short_id}` read by a real unfurler (open-graph-scraper) over HTTP,
 * oEmbed against the spec's `photo` fields, and PUBLIC_BASE_URL at start-up.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import ogs from "npm:open-graph-scraper@6.12.0";
import { unfurl } from "npm:unfurl.js@6.4.0";
import sharp from "sharp";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import type { ImageDto } from "../domain/types.ts";
import { createApp } from "../wiring/app.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, randomColor, upload } from "./_harness/images.ts";
import { hostEnv } from "./_harness/child.ts";
import { serve } from "./_harness/playwright.ts";

const svc = await startService({
  thumbnails: { thumbnail: (b) => makeThumbnail(b) },
  env: { LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1" },
});
const server = serve(svc.app.fetch);
Deno.test.afterAll(async () => {
  await server.close();
  await svc.close();
});
const auth = await authHeader(svc.app);

/** A two-frame animated GIF (sharp joins the frames). */
async function animatedGif(): Promise<Uint8Array> {
  const frame = (c: { r: number; g: number; b: number }) =>
    sharp({ create: { width: 60, height: 40, channels: 3, background: c } }).png().toBuffer();
  const frames = await Promise.all([frame(randomColor()), frame(randomColor())]);
  const gif = await sharp(frames, { join: { animated: true } }).gif({ delay: [100, 100] })
    .toBuffer();
  return new Uint8Array(gif);
}

async function seed(bytes: Uint8Array, tags: string[] = []): Promise<ImageDto> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

const TYPES = [
  ["jpg", "image/jpeg", await makeImage("jpeg", 300, 200)],
  ["png", "image/png", await makeImage("png", 320, 240)],
  ["gif", "image/gif", await animatedGif()],
  ["webp", "image/webp", await makeImage("webp", 200, 300)],
  ["avif", "image/avif", await makeImage("avif", 64, 48)],
] as const;
const seeded = await Promise.all(
  TYPES.map(async ([ext, type, bytes]) => ({ ext, type, bytes, img: await seed(bytes, ["cat"]) })),
);
const png = seeded[1].img;
const gif = seeded[2].img;

/** Headers that describe the bytes (the request id and date differ per answer). */
function byteHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of res.headers) if (k !== "x-request-id" && k !== "date") out[k] = v;
  return out;
}

Deno.test("a direct link serves every stored type exactly as /file: headers, bytes, 304, Range, HEAD", async () => {
  for (const { ext, type, bytes, img } of seeded) {
    const path = `/${img.short_id}.${ext}`;
    const res = await svc.app.request(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), type, path);
    assert.equal(res.headers.get("etag"), `"${img.hash}"`);
    assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("location"), null, "no redirect");
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes, path);
    const file = await svc.app.request(`/api/v1/images/${img.short_id}/file`);
    await file.body?.cancel();
    assert.deepEqual(byteHeaders(res), byteHeaders(file), `${path} headers as /file's`);

    const etag = res.headers.get("etag")!;
    const notModified = await svc.app.request(path, { headers: { "if-none-match": etag } });
    assert.equal(notModified.status, 304, path);
    assert.equal((await notModified.arrayBuffer()).byteLength, 0);

    const part = await svc.app.request(path, { headers: { range: "bytes=2-9" } });
    assert.equal(part.status, 206, path);
    assert.equal(part.headers.get("content-range"), `bytes 2-9/${bytes.length}`);
    assert.deepEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(2, 10));
    const past = await svc.app.request(path, { headers: { range: `bytes=${bytes.length}-` } });
    assert.equal(past.status, 416, path);
    await past.body?.cancel();

    const head = await svc.app.request(path, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), String(bytes.length));
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  }
});

Deno.test("an animated GIF's direct link keeps every frame", async () => {
  const res = await svc.app.request(`/${gif.short_id}.gif`);
  const meta = await sharp(new Uint8Array(await res.arrayBuffer()), { animated: true }).metadata();
  assert.equal(meta.pages, 2);
});

Deno.test("a wrong extension, an unknown ID or a malformed name is a 404 (the HTML not-found page)", async () => {
  const paths = [
    `/${png.short_id}.jpg`,
    `/${png.short_id}.gif`,
    `/${png.short_id}.jpeg`,
    `/${png.short_id}.PNG`,
    `/${png.short_id}.txt`,
    `/${png.short_id}`,
    "/ZZZZZZZZ.png",
    `/${png.short_id.slice(1)}.png`,
    `/${png.short_id}.png/extra`,
  ];
  for (const path of paths) {
    for (const method of ["GET", "HEAD"]) {
      const res = await svc.app.request(path, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/, path);
      await res.body?.cancel();
    }
  }
});

Deno.test("a direct link is 503 when storage is down, the page-free JSON of the byte routes", async () => {
  const unseen = await seed(await makeImage("png", 30, 30));
  await svc.s3.stop();
  try {
    const res = await svc.app.request(`/${unseen.short_id}.png`);
    assert.equal(res.status, 503);
    assert.doesNotMatch(await res.text(), /127\.0\.0\.1|S3|bucket/i);
  } finally {
    await svc.s3.restart();
  }
});

// ---- link previews ----

Deno.test("a real unfurler (open-graph-scraper) reads the title, the image and its size, and the image fetches", async () => {
  const url = `${server.url}/i/${png.short_id}`;
  const { error, result, html } = await ogs({ url, timeout: 10 });
  assert.equal(error, false);
  assert.equal(result.ogTitle, "cat");
  assert.equal(result.ogSiteName, "Reactions");
  assert.equal(result.ogType, "website");
  assert.equal(result.ogUrl, url);
  assert.equal(result.twitterCard, "summary_large_image");
  const [image] = result.ogImage!;
  assert.equal(image.url, `${server.url}/${png.short_id}.png`);
  assert.equal(Number(image.width), 320);
  assert.equal(Number(image.height), 240);
  assert.equal(image.type, "image/png");
  assert.equal(result.twitterImage![0].url, image.url);
  assert.match(html!, /<meta property="og:image:alt" content="cat">/);

  const fetched = await fetch(image.url);
  assert.equal(fetched.status, 200);
  assert.equal(fetched.headers.get("content-type"), "image/png");
  const meta = await sharp(new Uint8Array(await fetched.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ["png", 320, 240]);
});

Deno.test("the page advertises its oEmbed endpoint, and following it gives the photo", async () => {
  const page = await (await fetch(`${server.url}/i/${png.short_id}`)).text();
  const link = /<link rel="alternate" type="application\/json\+oembed" href="([^"]+)"/.exec(page);
  assert.ok(link, "discovery link");
  const href = link[1].replace(/&amp;/g, "&");
  assert.ok(href.startsWith(`${server.url}/api/v1/oembed?url=`), href);
  const res = await fetch(href);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.url, `${server.url}/${png.short_id}.png`);
});

Deno.test("a second unfurler (unfurl.js) discovers the oEmbed link and gets the photo from it", async () => {
  const url = `${server.url}/i/${gif.short_id}`;
  const result = await unfurl(url, { oembed: true, timeout: 10_000 });
  const photo = result.oEmbed as { type: string; url: string; width: number; height: number };
  assert.equal(photo.type, "photo");
  assert.equal(photo.url, `${server.url}/${gif.short_id}.gif`);
  assert.deepEqual([photo.width, photo.height], [60, 40]);
  assert.equal(result.open_graph.images?.[0].url, photo.url);
  assert.equal(result.twitter_card.card, "summary_large_image");
});

Deno.test("the image page answers 200 HTML with the tags to any Accept, none at all, and to HEAD", async () => {
  const path = `/i/${png.short_id}`;
  const accepts = [
    undefined, // Discordbot sends none
    "*/*",
    "application/json",
    "image/webp,image/*",
    "text/plain",
    "nonsense;;q=x",
  ];
  for (const accept of accepts) {
    const headers: Record<string, string> = accept === undefined ? {} : { accept };
    const res = await svc.app.request(path, { headers });
    assert.equal(res.status, 200, String(accept));
    assert.match(res.headers.get("content-type")!, /^text\/html/);
    assert.match(await res.text(), /<meta property="og:image" content="[^"]+\.png">/);
  }
  const head = await svc.app.request(path, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.match(head.headers.get("content-type")!, /^text\/html/);
  assert.equal((await head.arrayBuffer()).byteLength, 0);
  // Over real HTTP too, where the server itself answers HEAD.
  const overHttp = await fetch(`${server.url}${path}`, { method: "HEAD" });
  assert.equal(overHttp.status, 200);
  assert.match(overHttp.headers.get("content-type")!, /^text\/html/);
});

Deno.test("an original over 8 MB is previewed by its thumbnail, with the thumbnail's type and size", async () => {
  const big = await seed(await makeImage("jpeg", 1200, 800), ["huge"]);
  await svc.db.sql`update images set size_bytes = ${
    9 * 1024 * 1024
  } where short_id = ${big.short_id}`;
  const { result } = await ogs({ url: `${server.url}/i/${big.short_id}`, timeout: 10 });
  const [image] = result.ogImage!;
  assert.equal(image.url, `${server.url}/api/v1/images/${big.short_id}/thumbnail`);
  assert.equal(image.type, "image/webp");
  const fetched = await fetch(image.url);
  const meta = await sharp(new Uint8Array(await fetched.arrayBuffer())).metadata();
  assert.deepEqual(
    [meta.format, meta.width, meta.height],
    ["webp", Number(image.width), Number(image.height)],
  );
  assert.deepEqual([image.width, image.height].map(Number), [400, 267]);
});

Deno.test("tags and alt text are escaped in the preview tags", async () => {
  const img = await seed(await makeImage("png", 20, 20), [`q"uote<b>&amp`]);
  const html = await (await svc.app.request(`/i/${img.short_id}`)).text();
  assert.match(html, /<meta property="og:title" content="q&quot;uote&lt;b&gt;&amp;amp">/);
  assert.doesNotMatch(html, /<b>&amp"/);
});

Deno.test("forwarded proto counts only from a trusted proxy, forwarded host only when trusted too", async () => {
  const path = `/i/${png.short_id}`;
  const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "reactions.example.com" };
  const port = new URL(server.url).port;
  // From 127.0.0.1 (trusted in this service): the proxy's scheme; its host only with
  // TRUST_FORWARDED_HOST (a proxy that passes a client's own header on would let clients pick it).
  const trusted = await (await fetch(`${server.url}${path}`, { headers: forwarded })).text();
  assert.match(
    trusted,
    new RegExp(`<meta property="og:url" content="https://127\\.0\\.0\\.1:${port}/i/`),
  );
  const config = { ...svc.config, TRUST_FORWARDED_HOST: true };
  const believing = serve(createApp({ ...svc.services, config }).fetch);
  try {
    const html = await (await fetch(`${believing.url}${path}`, { headers: forwarded })).text();
    assert.match(html, /<meta property="og:url" content="https:\/\/reactions\.example\.com\/i\//);
  } finally {
    await believing.close();
  }
  // In process there is no peer: nobody is trusted, the request's own origin stays.
  const untrusted = await (await svc.app.request(`http://board.test${path}`, {
    headers: forwarded,
  })).text();
  assert.match(untrusted, /<meta property="og:url" content="http:\/\/board\.test\/i\//);
});

// ---- oEmbed ----

const oembed = (url: string, extra = "", app = svc.app, host = "http://board.test") =>
  app.request(`${host}/api/v1/oembed?url=${encodeURIComponent(url)}${extra}`);

Deno.test("oEmbed answers a page or direct link with the spec's required photo fields", async () => {
  for (
    const url of [`http://board.test/i/${png.short_id}`, `http://board.test/${png.short_id}.png`]
  ) {
    const res = await oembed(url);
    assert.equal(res.status, 200, url);
    assert.match(res.headers.get("content-type")!, /^application\/json/);
    const body = await res.json();
    // oEmbed 1.0, 2.3.4: version and type always; url, width and height for a photo.
    assert.equal(body.version, "1.0");
    assert.equal(body.type, "photo");
    assert.equal(body.url, `http://board.test/${png.short_id}.png`);
    assert.equal(body.width, 320);
    assert.equal(body.height, 240);
    assert.equal(body.title, "cat");
    assert.equal(body.provider_name, "Reactions");
    assert.equal(body.provider_url, "http://board.test/");
    assert.ok(Number.isInteger(body.cache_age));
    // Thumbnail fields come as a set of three.
    assert.equal(body.thumbnail_url, `http://board.test/api/v1/images/${png.short_id}/thumbnail`);
    assert.deepEqual([body.thumbnail_width, body.thumbnail_height], [320, 240]);
    const img = await svc.app.request(body.url);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get("content-type"), "image/png");
    await img.body?.cancel();
  }
});

Deno.test("oEmbed scales to maxwidth and maxheight, keeping the aspect ratio and never enlarging", async () => {
  const page = `http://board.test/i/${png.short_id}`; // 320 x 240
  const cases: [string, number, number][] = [
    ["&maxwidth=160", 160, 120],
    ["&maxheight=60", 80, 60],
    ["&maxwidth=100&maxheight=100", 100, 75],
    ["&maxwidth=1000&maxheight=1000", 320, 240],
    ["&maxwidth=1", 1, 1],
  ];
  for (const [extra, w, h] of cases) {
    const body = await (await oembed(page, extra)).json();
    assert.deepEqual([body.width, body.height], [w, h], extra);
    assert.ok(body.thumbnail_width <= w && body.thumbnail_height <= h, extra);
  }
  const bad = await oembed(page, "&maxwidth=0");
  assert.equal(bad.status, 422);
  assert.ok((await bad.json()).detail);
});

Deno.test("oEmbed: 404 for foreign, unknown or mistyped URLs, 501 for format=xml, 422 without url", async () => {
  const notFound = [
    `http://elsewhere.example/i/${png.short_id}`,
    `http://board.test.evil/i/${png.short_id}`,
    `http://board.test:8080/i/${png.short_id}`,
    `http://user@board.test/i/${png.short_id}`,
    `ftp://board.test/i/${png.short_id}`,
    "http://board.test/i/ZZZZZZZZ",
    `http://board.test/${png.short_id}.jpg`,
    `http://board.test/tags`,
    "not a url",
  ];
  for (const url of notFound) {
    const res = await oembed(url);
    assert.equal(res.status, 404, url);
    assert.equal(typeof (await res.json()).detail, "string");
  }
  // The scheme may differ: a link shared as https:// is still this site's.
  assert.equal((await oembed(`https://board.test/i/${png.short_id}`)).status, 200);
  for (const format of ["xml", "XML", "yaml"]) {
    const res = await oembed(`http://board.test/i/${png.short_id}`, `&format=${format}`);
    assert.equal(res.status, 501, format);
    await res.body?.cancel();
  }
  assert.equal((await oembed(`http://board.test/i/${png.short_id}`, "&format=json")).status, 200);
  const missing = await svc.app.request("/api/v1/oembed");
  assert.equal(missing.status, 422);
  await missing.body?.cancel();
});

Deno.test("with PUBLIC_BASE_URL, previews and oEmbed use it; the API's file_url stays the proxy path", async () => {
  const pub = await startService({
    db: svc.db,
    s3: svc.s3,
    env: { PUBLIC_BASE_URL: "  https://reactions.example.com/ " },
  });
  try {
    const html = await (await pub.app.request(`http://internal:8000/i/${png.short_id}`)).text();
    assert.match(
      html,
      new RegExp(
        `<meta property="og:image" content="https://reactions\\.example\\.com/${png.short_id}\\.png">`,
      ),
    );
    const body = await (await oembed(
      `https://reactions.example.com/i/${png.short_id}`,
      "",
      pub.app,
      "http://internal:8000",
    )).json();
    assert.equal(body.url, `https://reactions.example.com/${png.short_id}.png`);
    assert.equal(body.provider_url, "https://reactions.example.com/");
    // The request's own host is not the public one.
    const foreign = await oembed(
      `http://internal:8000/i/${png.short_id}`,
      "",
      pub.app,
      "http://internal:8000",
    );
    assert.equal(foreign.status, 404);
    await foreign.body?.cancel();
    const api = await (await pub.app.request(`/api/v1/images/${png.short_id}`)).json();
    assert.equal(api.file_url, `/api/v1/images/${png.short_id}/file`);
  } finally {
    await pub.close();
  }
});

Deno.test("a bad PUBLIC_BASE_URL stops start-up with a one-line message naming it", async () => {
  const main = fileURLToPath(new URL("../main.ts", import.meta.url));
  for (const value of ["ftp://example.com", "https://example.com/?a=1", "example.com"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main],
      clearEnv: true,
      env: { ...hostEnv(), PUBLIC_BASE_URL: value },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.equal(stderr.trim().split("\n").length, 1, stderr);
    assert.match(stderr, /^Invalid configuration: PUBLIC_BASE_URL: /);
  }
});
