/**
 * The near-duplicate UI (issue 22) in chromium against the real service: "Looks like" after an
 * upload with its one-click delete and merge, "Similar images" on the detail page, and the
 * "possible duplicates" view of the tags page.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Page } from "npm:playwright-core@1.65.1";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, randomTag, upload } from "../_harness/images.ts";
import { makeSources, makeVariants } from "../_harness/similar_corpus.ts";
import {
  collectErrors,
  ensureBuiltAssets,
  launchBrowser,
  screenshot,
  serve,
} from "../_harness/playwright.ts";

await ensureBuiltAssets();

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ thumbnails: pool });
const server = serve(svc.app.fetch);
const browser = await launchBrowser();
const auth = await authHeader(svc.app);
const TOKEN = auth.authorization.slice("Bearer ".length);
Deno.test.afterAll(async () => {
  try {
    await browser.close();
  } finally {
    await server.close();
    await svc.close();
    pool.close();
  }
});
addEventListener("unload", () => void browser.close().catch(() => {}));

/**
 * Pictures no other test uploads (a photo, its reposts named in `wanted`, a drawing), so that
 * what a test finds near its images is its own, whatever ran before it. Each test has its own
 * `seed`: the same pictures in any order of the tests (a seed drawn in order gave one test a photo
 * whose two reposts were not near each other, in one shuffled order).
 */
async function ownPictures(seed: number, ...wanted: string[]) {
  const [photo, drawing] = await makeSources(2, seed);
  const reposts = await makeVariants(photo, undefined, wanted);
  const variant = (name: string) => reposts.find((v) => v.name.startsWith(name))!.bytes;
  return { photo, drawing, reposts, variant };
}

async function seed(bytes: Uint8Array, tags: string[] = []): Promise<string> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return (await res.json()).short_id;
}

async function page(signedIn: boolean): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (signedIn) {
    await context.addInitScript((token) => localStorage.setItem("imageboard.token", token), TOKEN);
  }
  return await context.newPage();
}

async function imageTags(id: string): Promise<string[]> {
  const res = await svc.app.request(`/api/v1/images/${id}`);
  return res.status === 200 ? (await res.json()).tags.map((t: { name: string }) => t.name) : [];
}

Deno.test("after an upload, 'Looks like' shows the near-duplicate and merges the tags in one click", async () => {
  const { photo, variant } = await ownPictures(31, "jpeg q30");
  const oldTag = randomTag("old");
  const original = await seed(photo.bytes, [oldTag]);
  const p = await page(true);
  const errors = collectErrors(p);
  await p.goto(`${server.url}/upload`);
  const newTag = randomTag("new");
  await p.locator("#upload-tags").fill(newTag);
  await p.locator("input[type=file]").setInputFiles([
    { name: "repost.jpg", mimeType: "image/jpeg", buffer: Buffer.from(variant("jpeg q30")) },
  ]);
  const row = p.locator(".uploads li").first();
  // The upload page holds a near-duplicate back before sending it (issue 44): send it anyway.
  await row.getByRole("button", { name: "Upload anyway" }).click();
  await row.locator(".looks-like").waitFor();
  assert.match(await row.locator(".looks-like").innerText(), /Looks like/);
  const thumb = row.locator(`.looks-like a[href="/i/${original}"] img`);
  await thumb.waitFor();
  // Loaded, not only placed: a busy machine may take a moment to fetch it.
  await thumb.evaluate((img: HTMLImageElement) =>
    img.complete && img.naturalWidth > 0 ? true : img.decode().then(() => img.naturalWidth > 0)
  ).then((loaded) => assert.ok(loaded, "the near-duplicate's thumbnail loads"));
  await screenshot(p, "similar_upload.png");
  await row.getByRole("button", { name: "Merge tags into this" }).click();
  await row.getByText(`Tags merged into ${original}`).waitFor();
  assert.deepEqual((await imageTags(original)).sort(), [newTag, oldTag].sort());
  assert.equal(await row.locator(".looks-like").count(), 0);
  assert.deepEqual(errors, []);
  await p.context().close();
});

Deno.test("'Delete the new one' removes the fresh upload", async () => {
  const { variant } = await ownPictures(32, "png", "webp");
  await seed(variant("png"));
  const p = await page(true);
  await p.goto(`${server.url}/upload`);
  await p.locator("input[type=file]").setInputFiles([
    { name: "again.webp", mimeType: "image/webp", buffer: Buffer.from(variant("webp")) },
  ]);
  const row = p.locator(".uploads li").first();
  await row.getByRole("button", { name: "Upload anyway" }).click();
  await row.locator(".looks-like").waitFor();
  const href = await row.locator("a", { hasText: "View" }).getAttribute("href");
  await row.getByRole("button", { name: "Delete the new one" }).click();
  await row.getByText("Deleted the new copy").waitFor();
  const res = await svc.app.request(`/api/v1/images/${href!.slice("/i/".length)}`);
  assert.equal(res.status, 404);
  await p.context().close();
});

Deno.test("uploading content that is already here offers no 'Looks like' (it would delete the original)", async () => {
  // The two JPEG recompressions; the second, at the seed's quality, is uploaded twice.
  const { photo, reposts } = await ownPictures(33, "jpeg q");
  await seed(photo.bytes);
  const existing = await seed(reposts[1].bytes);
  const p = await page(true);
  const asked: string[] = [];
  p.on("request", (r) => asked.push(r.url()));
  await p.goto(`${server.url}/upload`);
  await p.locator("input[type=file]").setInputFiles([
    { name: "same.jpg", mimeType: "image/jpeg", buffer: Buffer.from(reposts[1].bytes) },
  ]);
  const row = p.locator(".uploads li").first();
  await row.getByText("Already here").waitFor();
  // The answer lists the original photo as a near-duplicate; the row must still offer nothing,
  // and ask nothing: "Looks like" would fetch the near-duplicates once mounted.
  await p.waitForLoadState("networkidle");
  assert.equal(await row.locator(".looks-like").count(), 0);
  assert.deepEqual(asked.filter((u) => u.includes("/similar")), []);
  assert.equal((await svc.app.request(`/api/v1/images/${existing}`)).status, 200);
  await p.context().close();
});

Deno.test("an upload with no near-duplicate shows no 'Looks like'", async () => {
  const { drawing } = await ownPictures(34);
  const p = await page(true);
  await p.goto(`${server.url}/upload`);
  await p.locator("input[type=file]").setInputFiles([
    { name: "drawing.png", mimeType: "image/png", buffer: Buffer.from(drawing.bytes) },
  ]);
  const row = p.locator(".uploads li").first();
  await row.getByText("Uploaded").waitFor();
  assert.equal(await row.locator(".looks-like").count(), 0);
  await p.context().close();
});

Deno.test("the detail page lists 'Similar images' for anyone", async () => {
  const { photo, variant } = await ownPictures(35, "brightness +10%");
  const b = await seed(photo.bytes);
  const a = await seed(variant("brightness +10%")); // a near-duplicate of b
  const p = await page(false);
  const errors = collectErrors(p);
  await p.goto(`${server.url}/i/${a}`);
  const section = p.locator("section.similar");
  await section.waitFor();
  assert.equal(await section.locator("h2").innerText(), "Similar images");
  const links = await section.locator("a").evaluateAll((as) =>
    as.map((a) => a.getAttribute("href"))
  );
  assert.ok(links.includes(`/i/${b}`), `its near-duplicate among ${links}`);
  assert.ok(!links.includes(`/i/${a}`), "never the image itself");
  await screenshot(p, "similar_detail.png");
  assert.deepEqual(errors, []);
  await p.context().close();
});

Deno.test("the tags page's 'Possible duplicates' view lists pairs and keeps one with a click", async () => {
  const { variant } = await ownPictures(36, "brightness -10%", "crop");
  // Two shared tags: more than any pair the other tests leave, so this pair is listed first.
  const shared = [randomTag("pair"), randomTag("pair")].sort();
  const a = await seed(variant("brightness -10%"), shared);
  const b = await seed(variant("crop"), shared);
  const p = await page(true);
  const errors = collectErrors(p);
  await p.goto(`${server.url}/tags`);
  await p.getByRole("button", { name: "Show possible duplicates" }).click();
  const first = p.locator("section.duplicates li").first();
  await first.waitFor();
  const ids = await first.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual([...ids].sort(), [`/i/${a}`, `/i/${b}`].sort(), "most shared tags first");
  assert.match(await first.innerText(), /2 shared tags/);
  await screenshot(p, "similar_pairs.png");
  await first.getByRole("button", { name: "Keep this, merge the other" }).first().click();
  await p.getByText(/^Merged /).waitFor();
  const kept = ids[0]!.slice(3), dropped = ids[1]!.slice(3);
  assert.equal((await svc.app.request(`/api/v1/images/${dropped}`)).status, 404);
  assert.deepEqual((await imageTags(kept)).sort(), shared);
  assert.deepEqual(errors, []);
  await p.context().close();
});
