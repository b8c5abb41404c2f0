/**
 * Moving images in the browser (issue 45): the library marks them and plays a GIF's or a video's
 * animated preview on hover and keyboard focus, never for a reader who prefers reduced motion;
 * the image page plays a video muted and looping, with controls. Both pass axe-core.
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.1";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import type { ImageDto } from "../../domain/types.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, upload } from "../_harness/images.ts";
import { makeVideo } from "../_harness/videos.ts";
import { axeReport } from "./_axe.ts";
import {
  BROWSER,
  browserTest,
  ensureBuiltAssets,
  hydrated,
  launchBrowser,
  serve,
} from "../_harness/playwright.ts";

await ensureBuiltAssets();

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ thumbnails: pool, jobs: true });
const server = serve(svc.app.fetch);
const browser = BROWSER.skip ? null : await launchBrowser();
const auth = await authHeader(svc.app);

Deno.test.afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server.close();
    await svc.close();
    pool.close();
  }
});
addEventListener("unload", () => void browser?.close().catch(() => {}));

async function seed(bytes: Uint8Array, tags: string[]): Promise<ImageDto> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

/** The image once its animated preview is made (the background job). */
async function withPreview(image: ImageDto): Promise<ImageDto> {
  for (let i = 0; i < 600; i++) {
    const now: ImageDto = await (await svc.app.request(`/api/v1/images/${image.short_id}`)).json();
    if (now.preview_url !== null) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no preview for ${image.short_id} after 60 s`);
}

const gif = await withPreview(await seed(await makeVideo("gif", 2), ["looping"]));
const webm = await withPreview(await seed(await makeVideo("webm_sound", 2), ["looping"]));

const it = (name: string, fn: (page: Page) => Promise<void>) =>
  browserTest(name, () => browser!, null, fn);

const src = (page: Page, id: string) => page.locator(`a[href="/i/${id}"] img`).getAttribute("src");

if (!BROWSER.skip) {
  it("the library marks moving items and plays a preview on hover and keyboard focus", async (page) => {
    await page.goto(`${server.url}/?tags=looping`);
    await hydrated(page);
    const card = page.locator(`a[href="/i/${gif.short_id}"]`);
    assert.equal(await card.getAttribute("class"), "moving");
    assert.equal(await card.locator(".moving-badge").textContent(), "GIF");
    assert.equal(
      await page.locator(`a[href="/i/${webm.short_id}"] .moving-badge`).textContent(),
      "Video",
    );
    assert.equal(await src(page, gif.short_id), gif.thumbnail_url);
    await card.hover();
    await page.waitForFunction(
      ([id, url]) => document.querySelector(`a[href="/i/${id}"] img`)?.getAttribute("src") === url,
      [gif.short_id, gif.preview_url],
    );
    // It really plays: the preview is an animated WebP that the browser loaded.
    await page.waitForFunction((id) => {
      const img = document.querySelector<HTMLImageElement>(`a[href="/i/${id}"] img`);
      return img?.complete && img.naturalWidth > 0;
    }, gif.short_id);
    await page.mouse.move(0, 0);
    await page.waitForFunction(
      ([id, url]) => document.querySelector(`a[href="/i/${id}"] img`)?.getAttribute("src") === url,
      [gif.short_id, gif.thumbnail_url],
    );
    await page.locator(`a[href="/i/${webm.short_id}"]`).focus();
    await page.waitForFunction(
      ([id, url]) => document.querySelector(`a[href="/i/${id}"] img`)?.getAttribute("src") === url,
      [webm.short_id, webm.preview_url],
    );
    assert.equal(await axeReport(page), "");
  });

  it("with prefers-reduced-motion nothing moves on hover or focus", async (page) => {
    await page.emulateMedia({ reducedMotion: "reduce" });
    await page.goto(`${server.url}/?tags=looping`);
    await hydrated(page);
    await page.locator(`a[href="/i/${gif.short_id}"]`).hover();
    await page.locator(`a[href="/i/${webm.short_id}"]`).focus();
    // Give a preview every chance to start: a rendered frame after the events.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    assert.equal(await src(page, gif.short_id), gif.thumbnail_url);
    assert.equal(await src(page, webm.short_id), webm.thumbnail_url);
  });

  it("a video plays on its page: muted, looping, with controls and its poster", async (page) => {
    await page.goto(`${server.url}/i/${webm.short_id}`);
    await hydrated(page);
    const video = page.locator("figure video");
    assert.deepEqual(
      await video.evaluate((v: HTMLVideoElement) => ({
        muted: v.muted,
        loop: v.loop,
        controls: v.controls,
        poster: new URL(v.poster).pathname,
        paused: v.paused,
      })),
      { muted: true, loop: true, controls: true, poster: webm.thumbnail_url, paused: true },
    );
    await video.evaluate((v: HTMLVideoElement) => v.play());
    await page.waitForFunction(() => {
      const v = document.querySelector<HTMLVideoElement>("figure video");
      return v !== null && !v.paused && v.currentTime > 0;
    });
    assert.equal(await axeReport(page), "");
  });
}
