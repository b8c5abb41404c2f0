/**
 * Every page of the board passes axe-core (WCAG 2.0/2.1 A and AA, 2.2's target size, axe's best
 * practices, and no text over a picture: tests/browser/_axe.ts) in four ways: light and dark
 * colour scheme, on a desktop (1280 x 800) and on a phone (390 x 844, touch); signed out and
 * signed in, including the states a person opens: the autocomplete list, an upload's results,
 * the detail page's editors and copy fallback, the similar images and the possible duplicates.
 * One service and one browser for the file; a fresh context per page and device.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { BrowserContext, BrowserContextOptions, Page } from "npm:playwright-core@1.65.1";
import sharp from "sharp";
import { setImageCaption } from "../../db/captions.ts";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import type { ImageDto } from "../../domain/types.ts";
import { startService, TEST_PASSWORD } from "../_harness/app.ts";
import { authHeader, upload } from "../_harness/images.ts";
import { makeSources, makeVariants } from "../_harness/similar_corpus.ts";
import { type AxeCheckOptions, axeReport } from "./_axe.ts";
import {
  BROWSER,
  ensureBuiltAssets,
  hydrated,
  launchBrowser,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";
import { type Face, face } from "../_harness/faces.ts";

await ensureBuiltAssets();

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ thumbnails: pool });
const server = serve(svc.app.fetch);
const browser = BROWSER.skip ? null : await launchBrowser();
const auth = await authHeader(svc.app);
const TOKEN = auth.authorization.slice("Bearer ".length);

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

// ---- content: tagged faces with captions, a photo with reposts, tag rules ----

async function seed(bytes: Uint8Array, tags: string[]): Promise<ImageDto> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

const FACES: [Face, string, string, string[]][] = [
  ["happy", "#74c0fc", "#4263eb", ["happy", "smile"]],
  ["surprised", "#ffa8a8", "#e03131", ["surprised", "shocked"]],
  ["sad", "#a5d8ff", "#1864ab", ["sad"]],
  ["wink", "#b2f2bb", "#2b8a3e", ["wink", "happy"]],
  ["angry", "#ffc078", "#d9480f", ["angry"]],
  ["happy", "#ffec99", "#f08c00", []],
];
const faces: ImageDto[] = [];
for (const [kind, c1, c2, tags] of FACES) {
  faces.push(await seed(await face(kind, 400, 300, c1, c2), tags));
}
const [captioned, handWritten, wordless] = faces;
await setImageCaption(svc.services.sql, captioned.short_id, "THIS IS FINE", "ocr");
await setImageCaption(svc.services.sql, handWritten.short_id, "WHEN THE CODE WORKS", "manual");
await setImageCaption(svc.services.sql, wordless.short_id, "", "ocr");

const [photo] = await makeSources(1, 31);
const reposts = await makeVariants(photo, undefined, ["brightness +10%", "gif frame 0"]);
const repost = (name: string) => reposts.find((v) => v.name.startsWith(name))!.bytes;
const original = await seed(photo.bytes, ["photo", "landscape"]);
await seed(repost("brightness +10%"), ["photo"]);
const gif = await seed(repost("gif frame 0"), ["photo", "animated"]);

for (
  const [method, path, body] of [
    ["PUT", "/api/v1/tag-aliases/smiling", { target: "smile" }],
    ["PUT", "/api/v1/tag-implications/wink", { implies: ["happy"] }],
  ] as const
) {
  const res = await svc.app.request(path, {
    method,
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.ok(res.ok, await res.clone().text());
}

// ---- the four ways a page is seen: two devices, each in both colour schemes ----

const DEVICES: [string, BrowserContextOptions][] = [
  ["desktop", { viewport: { width: 1280, height: 800 } }],
  ["phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
];
/** The page's background in each scheme (static/app.css), to tell that the scheme applied. */
const SCHEMES = [["light", "rgb(250, 250, 250)"], ["dark", "rgb(19, 19, 23)"]] as const;

/** One state of one page to check. */
interface Visit {
  path: string;
  signedIn?: boolean;
  /** The document's HTTP status (default 200). */
  status?: number;
  /** Takes the page from loaded to the state to check; `device` counts the devices so far. */
  open?: (page: Page, device: number) => Promise<unknown>;
  /** Set up the context before the page loads. */
  prepare?: (context: BrowserContext) => Promise<unknown>;
  axe?: AxeCheckOptions;
}

/** Waits until the images in view have loaded, so contrast is judged on the final page. */
const imagesInViewLoaded = (page: Page) =>
  page.waitForFunction(() =>
    [...document.images]
      .filter((img) => img.getBoundingClientRect().top < innerHeight)
      .every((img) => img.complete)
  );

/**
 * Registers one test that checks `visit` in all four ways and fails with every violation of
 * every way, readable (rule, impact, element, why). Each device loads and opens the page once;
 * the colour scheme is then switched on the same page, so both schemes see the same state.
 */
function a11yTest(name: string, visit: Visit) {
  Deno.test({
    name: `${name} passes axe-core in light and dark, desktop and phone`,
    ignore: BROWSER.skip,
    sanitizeOps: false,
    sanitizeResources: false,
  }, async () => {
    const failures: string[] = [];
    for (const [i, [device, options]] of DEVICES.entries()) {
      const context = await browser!.newContext(options);
      try {
        if (visit.signedIn) {
          await context.addInitScript((token) => {
            localStorage.setItem("imageboard.token", token);
            localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
          }, TOKEN);
        }
        await visit.prepare?.(context);
        const page = await context.newPage();
        page.setDefaultTimeout(WAIT_MS);
        const res = await page.goto(`${server.url}${visit.path}`);
        assert.equal(res?.status(), visit.status ?? 200, `${device}: ${visit.path}`);
        await hydrated(page);
        await visit.open?.(page, i);
        await imagesInViewLoaded(page);
        for (const [scheme, background] of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          const way = `${scheme} ${device}`;
          assert.deepEqual(
            await page.evaluate(
              () => [getComputedStyle(document.body).backgroundColor, innerWidth],
            ),
            [background, options.viewport!.width],
            `${way}: the scheme and the width apply`,
          );
          const report = await axeReport(page, visit.axe);
          if (report) failures.push(`${way}:\n${report}`);
        }
      } finally {
        await context.close();
      }
    }
    if (failures.length) assert.fail(`${visit.path}\n${failures.join("\n\n")}`);
  });
}

// ---- the pages ----

a11yTest("the library", {
  path: "/",
  open: (page) => page.locator(".grid img").first().waitFor(),
});

/** No Clipboard API: the page offers what was to be copied in a field to copy by hand. */
const noClipboard = (context: BrowserContext) =>
  context.addInitScript(() => Object.defineProperty(navigator, "clipboard", { value: null }));

a11yTest("the library with its copy fallback shown", {
  path: "/",
  prepare: noClipboard,
  open: async (page) => {
    await page.locator(".grid li").first().hover();
    await page.locator(".card-copy").first().click();
    await page.locator("#library-copy-fallback").waitFor();
  },
});

a11yTest("the library with its autocomplete list open", {
  path: "/",
  open: async (page) => {
    await page.locator("#tag-filter").fill("hap");
    await page.locator("#tag-filter-options li").first().waitFor();
    await page.locator("#tag-filter").press("ArrowDown");
    await page.locator("#tag-filter-options li[aria-selected=true]").waitFor();
  },
});

a11yTest("the library searched, with results", {
  path: "/?tags=happy",
  open: (page) => page.locator(".grid img").first().waitFor(),
});

a11yTest("the library searched, with none", {
  path: "/?tags=nothing_here",
  open: (page) => page.getByText("Nothing found for nothing_here.").waitFor(),
});

a11yTest("the tags page with the possible duplicates shown", {
  path: "/tags",
  open: async (page) => {
    await page.locator(".tag-list .rule").first().waitFor();
    await page.getByRole("button", { name: "Show possible duplicates" }).click();
    await page.locator("section.duplicates li").first().waitFor();
  },
});

a11yTest("the tags page signed in, with the rules editor and the duplicates", {
  path: "/tags",
  signedIn: true,
  open: async (page) => {
    await page.locator(".tag-rules .rule-list li").first().waitFor();
    await page.getByRole("button", { name: "Show possible duplicates" }).click();
    await page.getByRole("button", { name: "Keep this, merge the other" }).first().waitFor();
  },
});

a11yTest("an image with similar images, signed out", {
  path: `/i/${original.short_id}`,
  open: (page) => page.locator("section.similar img").first().waitFor(),
});

a11yTest("an image with its words, signed out", {
  path: `/i/${captioned.short_id}`,
  open: (page) => page.getByRole("button", { name: "Copy link" }).waitFor(),
});

a11yTest("an image signed in, with the write controls", {
  path: `/i/${handWritten.short_id}`,
  signedIn: true,
  open: (page) => page.getByRole("button", { name: "Read it again" }).waitFor(),
});

a11yTest("an image signed in, with the tag and caption editors and the delete question", {
  path: `/i/${wordless.short_id}`,
  signedIn: true,
  open: async (page) => {
    await page.getByRole("button", { name: "Edit caption" }).click();
    await page.getByRole("button", { name: "Edit tags" }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).waitFor();
  },
});

a11yTest("a GIF's page with the copy fallback shown", {
  path: `/i/${gif.short_id}`,
  prepare: noClipboard,
  open: async (page) => {
    await page.getByRole("button", { name: "Copy link" }).click();
    await page.locator(".copy-fallback input").waitFor();
  },
});

a11yTest("the upload page", {
  path: "/upload",
  signedIn: true,
  open: (page) => page.locator("input[type=file]").waitFor({ state: "attached" }),
});

a11yTest("the upload page with results: 'Looks like' and a refusal", {
  path: "/upload",
  signedIn: true,
  open: async (page, device) => {
    // A repost not seen before on each device: a new image (201) with near-duplicates.
    const bytes = await sharp(photo.bytes).jpeg({ quality: 40 + device }).toBuffer();
    await page.locator("#upload-tags").fill("photo, repost");
    await page.locator("input[type=file]").setInputFiles([
      { name: `repost-${device}.jpg`, mimeType: "image/jpeg", buffer: Buffer.from(bytes) },
      { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not an image") },
    ]);
    await page.locator(".uploads .looks-like img").first().waitFor();
    await page.locator(".uploads .failed").getByText("Not a supported image").waitFor();
  },
});

a11yTest("the sign-in page", {
  path: "/login?next=/upload",
  open: (page) => page.locator("#password").waitFor(),
});

a11yTest("the sign-in page with its error", {
  path: "/login",
  open: async (page) => {
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill(`not ${TEST_PASSWORD}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("Wrong username or password").waitFor();
  },
});

a11yTest("the not-found page", { path: "/no/such/page", status: 404 });
