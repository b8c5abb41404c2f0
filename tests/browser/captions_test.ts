/**
 * Caption text (issue 21) in chromium: a fresh upload's row shows its words once recognition has
 * read them, with no reload; the library's one search field finds images by tags and words
 * together; signed in, the detail page corrects the words by keyboard. The recogniser is a
 * stand-in that takes a moment, as the real one does (adapters/ocr has its own tests).
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import type { Page } from "npm:playwright-core@1.65.1";
import { setImageCaption } from "../../db/captions.ts";
import { startService } from "../_harness/app.ts";
import { makeThumbnail } from "../../adapters/thumbnails/make_thumbnail.ts";
import { authHeader, randomTag, upload } from "../_harness/images.ts";
import {
  browserTest as registerBrowserTest,
  ensureBuiltAssets,
  focusedOnArrival,
  hydrated,
  launchBrowser,
  screenshot,
  serve,
} from "../_harness/playwright.ts";

await ensureBuiltAssets();

/** How long the stand-in takes to read an image. */
const READ_MS = 1500;
const svc = await startService({
  jobs: true,
  // The upload page searches the board for each file first (search by image), which needs one.
  thumbnails: { thumbnail: (b) => makeThumbnail(b) },
  captionReader: {
    read: async () => {
      await new Promise((r) => setTimeout(r, READ_MS));
      return { text: "THIS IS FINE" };
    },
  },
});
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
  }
});
addEventListener("unload", () => void browser.close().catch(() => {}));

/** A meme: white words with a black outline over a coloured picture, `width` px wide. */
/**
 * A meme of `words`. `own` draws random blocks in place of the circle, so that it looks like no
 * other (the upload page searches the board first and offers "Already here" for a look-alike).
 */
async function meme(words: string, width = 640, own = false): Promise<Uint8Array> {
  const height = Math.round(width * 0.75);
  const blocks = own
    ? Array.from(
      { length: 8 },
      (_, i) =>
        Array.from({ length: 6 }, (_, j) =>
          Math.random() < 0.5
            ? `<rect x="${(i * width) / 8}" y="${(j * height) / 6}" width="${width / 8}" ` +
              `height="${height / 6}" fill="black"/>`
            : "").join(""),
    ).join("")
    : "";
  const hue = Math.floor(Math.random() * 360);
  // A corner of a colour of its own: two memes of the same words at the same hue were the same
  // bytes, and the second upload answered 200 (already here) instead of 201 (one run in ~100).
  const corner = `#${
    crypto.getRandomValues(new Uint8Array(3)).reduce((s, b) =>
      s + b.toString(16).padStart(2, "0"), "")
  }`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="hsl(${hue},70%,45%)"/>
      <stop offset="1" stop-color="hsl(${(hue + 60) % 360},60%,25%)"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <rect width="${width / 16}" height="${width / 16}" fill="${corner}"/>
    ${
    blocks ||
    `<circle cx="${width / 2}" cy="${height / 2}" r="${height / 4}" fill="hsl(${hue},40%,70%)"/>`
  }
    <text x="50%" y="${height * 0.9}" text-anchor="middle" font-family="DejaVu Sans"
      font-weight="bold" font-size="${width / 10}" fill="white" stroke="black"
      stroke-width="${width / 200}">${words}</text></svg>`;
  return new Uint8Array(
    await sharp(new TextEncoder().encode(svg)).jpeg({ quality: 85 }).toBuffer(),
  );
}

async function seed(words: string, tags: string[], text: string | null): Promise<string> {
  const res = await upload(svc.app, auth, await meme(words), tags);
  assert.equal(res.status, 201, await res.clone().text());
  const { short_id } = await res.json();
  if (text !== null) await setImageCaption(svc.services.sql, short_id, text, "manual");
  return short_id;
}

/** A browser test on this file's service, signed in or not. */
const browserTest = (name: string, signedIn: boolean, fn: (page: Page) => Promise<void>) =>
  registerBrowserTest(name, () => browser, signedIn ? TOKEN : null, fn);

browserTest(
  "a fresh upload's row shows its words once they are read, with no reload",
  true,
  async (page) => {
    await page.goto(`${server.url}/upload`);
    await hydrated(page);
    await page.locator(".dropzone input[type=file]").setInputFiles([
      {
        name: "fine.jpg",
        mimeType: "image/jpeg",
        buffer: Buffer.from(await meme("THIS IS FINE", 640, true)),
      },
    ]);
    const row = page.locator(".uploads li").first();
    await row.getByText("Reading the words on it…").waitFor();
    await row.locator(".caption q", { hasText: "THIS IS FINE" }).waitFor();
    await row.getByRole("link", { name: "View" }).click();
    await page.locator(".caption-box q", { hasText: "THIS IS FINE" }).waitFor();
  },
);

browserTest("the search field finds images by tags and words together", false, async (page) => {
  const tag = randomTag("mood");
  const fine = await seed("THIS IS FINE", [tag], "THIS IS FINE");
  const slip = await seed("FACEPALM", [tag], "FACEPRALM"); // a recognition slip
  await seed("EYE ROLL", [tag], "EYE ROLL");
  await seed("THIS IS FINE", ["elsewhere"], "THIS IS FINE");
  await page.goto(`${server.url}/`);
  await hydrated(page);
  await page.keyboard.press("/");
  await page.keyboard.type(`${tag} this is fine`);
  await page.keyboard.press("Escape"); // close the suggestions
  await page.keyboard.press("Enter");
  await page.waitForURL(`${server.url}/?tags=${tag}&q=this%20is%20fine`);
  const ids = () =>
    page.locator(".grid a").evaluateAll((as) => as.map((a) => a.getAttribute("href")!.slice(3)));
  assert.deepEqual(await ids(), [fine]);
  assert.equal(await page.inputValue("#tag-filter"), `${tag}, this is fine`);
  await page.locator("#tag-filter").fill(`${tag}, facepalm`);
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.waitForURL(`${server.url}/?tags=${tag}&q=facepalm`);
  assert.deepEqual(await ids(), [slip]);
});

browserTest("signed in, the detail page corrects the words by keyboard", true, async (page) => {
  const id = await seed("SIPS TEA", [randomTag("tea")], "SIPS TEE");
  await page.goto(`${server.url}/i/${id}`);
  await hydrated(page);
  await page.locator(".caption-box q", { hasText: "SIPS TEE" }).waitFor();
  await page.getByRole("button", { name: "Edit caption" }).focus();
  const focused = await focusedOnArrival(page, "edit-caption");
  await page.keyboard.press("Enter");
  assert.ok(await focused(), "the editor has the focus when it appears");
  await page.keyboard.press("Control+a");
  await page.keyboard.type("sips tea");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await page.getByText("Caption saved").waitFor();
  await page.locator(".caption-box", { hasText: "written by hand" }).waitFor();
  const saved = await (await svc.app.request(`/api/v1/images/${id}`)).json();
  assert.deepEqual([saved.text, saved.text_source], ["sips tea", "manual"]);
  await screenshot(page, "caption_detail.png");
});

browserTest("signed out, the words show without write controls", false, async (page) => {
  const id = await seed("EYE ROLL", [randomTag("eye")], "EYE ROLL");
  await page.goto(`${server.url}/i/${id}`);
  await hydrated(page);
  await page.locator(".caption-box q", { hasText: "EYE ROLL" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Edit caption" }).count(), 0);
});
