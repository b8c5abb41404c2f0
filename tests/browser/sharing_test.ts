/**
 * The copy buttons in chromium against the real service: "Copy image" puts a PNG on the
 * clipboard (converted in the page; a GIF's first frame, with the note), "Copy link" the direct
 * link, Markdown and HTML snippets, the library's one-click copy, and the selectable fallback
 * where the Clipboard API is refused: over plain http on a host that is not loopback, chromium
 * offers no `navigator.clipboard` at all (not a secure context). A signed-in person's copy counts
 * as a send (issue 43).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { type BrowserContext, chromium, type Page } from "npm:playwright-core@1.65.1";
import sharp from "sharp";
import { makeThumbnail } from "../../adapters/thumbnails/make_thumbnail.ts";
import type { ImageDto } from "../../domain/types.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, upload } from "../_harness/images.ts";
import {
  BROWSER,
  CHROMIUM_ARGS,
  collectErrors,
  ensureBuiltAssets,
  hydrated,
  screenshot,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";
import { face } from "../_harness/faces.ts";

await ensureBuiltAssets();

/** A name that resolves to loopback but is not "potentially trustworthy": plain http stays insecure. */
const INSECURE_HOST = "sharing.test";

const svc = await startService({ thumbnails: { thumbnail: (b) => makeThumbnail(b) } });
const server = serve(svc.app.fetch);
// Skipped (BROWSER.skip): the tests are ignored, and no browser is launched.
if (!BROWSER.skip && !BROWSER.path) throw new Error(BROWSER.reason);
const browser = BROWSER.skip ? null : await chromium.launch({
  executablePath: BROWSER.path!,
  args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${INSECURE_HOST} 127.0.0.1`],
});
Deno.test.afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server.close();
    await svc.close();
  }
});
addEventListener("unload", () => void browser?.close().catch(() => {}));

const auth = await authHeader(svc.app);
async function seed(bytes: Uint8Array, tags: string[]): Promise<ImageDto> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

/** A two-frame animated GIF of two faces. */
async function animatedGif(): Promise<Uint8Array> {
  const frames = await Promise.all([
    face("happy", 240, 180, "#ffec99", "#f08c00"),
    face("wink", 240, 180, "#ffec99", "#f08c00"),
  ]);
  const gif = await sharp(frames.map((f) => Buffer.from(f)), { join: { animated: true } })
    .gif({ delay: [400, 400] }).toBuffer();
  return new Uint8Array(gif);
}

const pngBytes = await face("surprised", 480, 360, "#e599f7", "#862e9c");
const png = await seed(pngBytes, ["surprised", "shocked"]);
const gif = await seed(await animatedGif(), ["happy", "wink"]);

/** The raw RGBA pixels of an image, for comparing what the clipboard holds with the original. */
async function rgba(bytes: Uint8Array) {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({
    resolveWithObject: true,
  });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

interface Ctx {
  context: BrowserContext;
  page: Page;
  base: string;
}

function browserTest(
  name: string,
  opts: { base?: string; clipboard?: boolean },
  fn: (c: Ctx) => Promise<void>,
) {
  Deno.test(
    { name, ignore: BROWSER.skip, sanitizeOps: false, sanitizeResources: false },
    async () => {
      const base = opts.base ?? server.url;
      const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        if (opts.clipboard) {
          await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
        }
        const page = await context.newPage();
        page.setDefaultTimeout(WAIT_MS);
        const errors = collectErrors(page);
        await fn({ context, page, base });
        assert.deepEqual(errors, [], "console errors");
      } finally {
        await context.close();
      }
    },
  );
}

/** The clipboard's items: their types, and the PNG's bytes when there is one. */
function readClipboard(page: Page) {
  return page.evaluate(async () => {
    const items = await navigator.clipboard.read();
    const types = items.flatMap((i) => [...i.types]);
    const withPng = items.find((i) => i.types.includes("image/png"));
    const bytes = withPng
      ? [...new Uint8Array(await (await withPng.getType("image/png")).arrayBuffer())]
      : null;
    return { types, bytes };
  });
}

browserTest(
  "Copy image puts the image itself on the clipboard as a PNG",
  { clipboard: true },
  async ({ page, base }) => {
    await page.goto(`${base}/i/${png.short_id}`);
    await hydrated(page);
    await page.getByRole("button", { name: "Copy image" }).click();
    await page.getByText("Copied image", { exact: true }).waitFor();
    const { types, bytes } = await readClipboard(page);
    assert.deepEqual(types, ["image/png"]);
    const copied = await rgba(new Uint8Array(bytes!));
    const original = await rgba(pngBytes);
    assert.deepEqual([copied.width, copied.height], [480, 360]);
    assert.equal((await sharp(new Uint8Array(bytes!)).metadata()).format, "png");
    assert.deepEqual(copied.data, original.data, "the same pixels as the original");
    assert.equal(await page.locator(".note").count(), 0, "no GIF note on a PNG");
  },
);

browserTest(
  "Copy image of a GIF copies its first frame as PNG and says the animation is not kept",
  { clipboard: true },
  async ({ page, base }) => {
    await page.goto(`${base}/i/${gif.short_id}`);
    await hydrated(page);
    await page.getByText("Paste the link to keep it animated.", { exact: false }).waitFor();
    await page.getByRole("button", { name: "Copy image" }).click();
    await page.getByText("Copied image as a still PNG (the GIF's animation is not kept)").waitFor();
    const { types, bytes } = await readClipboard(page);
    assert.deepEqual(types, ["image/png"]);
    const meta = await sharp(new Uint8Array(bytes!)).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.pages ?? 1], ["png", 240, 180, 1]);
    // The page still shows, and the direct link still serves, the animated original.
    const res = await fetch(`${base}/${gif.short_id}.gif`);
    const served = await sharp(new Uint8Array(await res.arrayBuffer()), { animated: true })
      .metadata();
    assert.equal(served.pages, 2);
  },
);

browserTest("Copy link, Copy Markdown and Copy HTML give the direct link, each confirmed", {
  clipboard: true,
}, async ({ page, base }) => {
  await page.goto(`${base}/i/${png.short_id}`);
  await hydrated(page);
  const direct = `${base}/${png.short_id}.png`;
  const clip = () => page.evaluate(() => navigator.clipboard.readText());
  await page.getByRole("button", { name: "Copy link" }).click();
  await page.getByText("Copied link").waitFor();
  assert.equal(await clip(), direct);
  await page.getByRole("button", { name: "Copy Markdown" }).click();
  await page.getByText("Copied Markdown").waitFor();
  assert.equal(await clip(), `![shocked, surprised](${direct})`);
  await page.getByRole("button", { name: "Copy HTML" }).click();
  await page.getByText("Copied HTML").waitFor();
  assert.equal(
    await clip(),
    `<img src="${direct}" alt="shocked, surprised" width="480" height="360">`,
  );
  // The link copied is the image itself.
  const res = await fetch(direct);
  assert.equal(res.headers.get("content-type"), "image/png");
  assert.deepEqual(new Uint8Array(await res.arrayBuffer()), pngBytes);
});

browserTest(
  "a signed-in person's copy counts as one send a day; a visitor's does not",
  { clipboard: true },
  async ({ context, page, base }) => {
    const image = await seed(await face("wink", 200, 150, "#a5d8ff", "#1864ab"), ["counted"]);
    const sends = async () =>
      (await (await svc.app.request(`/api/v1/images/${image.short_id}`)).json()).send_count;
    await page.goto(`${base}/i/${image.short_id}`);
    await hydrated(page);
    await page.getByRole("button", { name: "Copy link" }).click();
    await page.getByText("Copied link").waitFor();
    assert.equal(await sends(), 0, "a visitor's copy is not counted");

    const token = auth.authorization.slice("Bearer ".length);
    await context.addInitScript((t) => {
      localStorage.setItem("imageboard.token", t);
      localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
    }, token);
    await page.goto(`${base}/i/${image.short_id}`);
    await hydrated(page);
    const counted = page.waitForResponse((r) => r.url().endsWith(`/${image.short_id}/sends`));
    await page.getByRole("button", { name: "Copy link" }).click();
    assert.equal((await counted).status(), 204);
    const again = page.waitForResponse((r) => r.url().endsWith(`/${image.short_id}/sends`));
    await page.getByRole("button", { name: "Copy Markdown" }).click();
    assert.equal((await again).status(), 204);
    assert.equal(await sends(), 1, "counted once today");
  },
);

browserTest(
  "the library copies a card's direct link in one click",
  { clipboard: true },
  async ({ page, base }) => {
    await page.goto(`${base}/`);
    await hydrated(page);
    const card = page.locator(".grid li", { has: page.locator(`a[href="/i/${png.short_id}"]`) });
    await card.hover();
    await card.getByRole("button", { name: "Copy link to shocked, surprised" }).click();
    await page.getByText("Copied link").waitFor();
    assert.equal(
      await page.evaluate(() => navigator.clipboard.readText()),
      `${base}/${png.short_id}.png`,
    );
    assert.equal(page.url(), `${base}/`, "the click copies; it does not open the image");
  },
);

const insecureBase = () => server.url.replace("127.0.0.1", INSECURE_HOST);

browserTest(
  "where the Clipboard API is refused, each button shows the text selected to copy by hand",
  {
    base: insecureBase(),
  },
  async ({ page, base }) => {
    await page.goto(`${base}/i/${png.short_id}`);
    await hydrated(page);
    assert.equal(
      await page.evaluate(() => "clipboard" in navigator),
      false,
      "no Clipboard API here",
    );
    const direct = `${base}/${png.short_id}.png`;
    const field = page.locator("#detail-copy-fallback");
    const selected = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLInputElement;
        return el.id === "detail-copy-fallback"
          ? el.value.slice(el.selectionStart!, el.selectionEnd!)
          : null;
      });
    const cases: [string, string, string][] = [
      ["Copy link", direct, "Copy the link from here"],
      ["Copy Markdown", `![shocked, surprised](${direct})`, "Copy the Markdown from here"],
      ["Copy image", direct, "did not allow copying the image"],
    ];
    for (const [button, text, label] of cases) {
      await page.getByRole("button", { name: button }).click();
      await page.getByText(label, { exact: false }).waitFor();
      assert.equal(await field.inputValue(), text, button);
      // Focused and selected on the next turn, once the field is in the page.
      await page.waitForFunction(
        (want) => {
          const el = document.activeElement as HTMLInputElement | null;
          return el?.id === "detail-copy-fallback" &&
            el.value.slice(el.selectionStart!, el.selectionEnd!) === want;
        },
        text,
      ).catch(async (e) => {
        assert.equal(await selected(), text, `${button}: focused and selected (${e})`);
      });
      assert.equal(await page.getByText("Copied").count(), 0, "no false confirmation");
    }
    await page.getByRole("button", { name: "Close" }).click();
    assert.equal(await field.count(), 0);

    // The library's one-click copy falls back the same way.
    await page.goto(`${base}/`);
    await hydrated(page);
    await page.getByRole("button", { name: "Copy link to shocked, surprised" }).click();
    assert.equal(await page.locator("#library-copy-fallback").inputValue(), direct);
  },
);

browserTest(
  "after a copy the detail page shows its copy buttons and the image (screenshot kept)",
  { clipboard: true },
  async ({ page, base }) => {
    await page.goto(`${base}/i/${png.short_id}`);
    await hydrated(page);
    await page.waitForFunction(() =>
      [...document.images].every((i) => i.complete && i.naturalWidth)
    );
    await page.getByRole("button", { name: "Copy link" }).click();
    await page.getByText("Copied link").waitFor();
    // The README's docs/screenshot-detail.png is a copy of this artifact, refreshed by hand.
    await screenshot(page, "detail-share.png");
  },
);
