/**
 * UI tests in chromium against the real service: a migrated PostgreSQL database, s3rver, real
 * WebP thumbnails from the worker pool, and images seeded through the API. One browser for the
 * file; every test runs in a fresh browser context (its own storage and its own client address
 * for the login limiter, via X-Real-IP from a trusted loopback peer).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { BrowserContext, Page } from "npm:playwright-core@1.65.1";
import sharp from "sharp";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import type { ImageDto, ImagePage, TagDto } from "../../domain/types.ts";
import { startService, TEST_PASSWORD, type TestService } from "../_harness/app.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import {
  BROWSER,
  collectErrors,
  ensureBuiltAssets,
  hydrated,
  launchBrowser,
  type PageError,
  screenshot,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";
import { type Face, face } from "../_harness/faces.ts";

await ensureBuiltAssets();

const CDN = "https://cdn.example.test/board";
const ENV = {
  LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1",
  LOGIN_MAX_FAILURES: "3",
  MAX_UPLOAD_BYTES: "1048576",
};
const TOKEN_KEY = "imageboard.token";
/** Chrome logs every non-2xx load; where a test expects one it lists the status. */
const HTTP_ERROR = /^Failed to load resource: the server responded with a status of (\d+)/;

// ---- the service, its CDN-configured twin, the browser ----

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
const svc = await startService({ env: ENV, thumbnails: pool });
const cdnSvc = await startService({
  db: svc.db,
  s3: svc.s3,
  env: { ...ENV, S3_PUBLIC_BASE_URL: CDN },
});
const server = serve(svc.app.fetch);
const cdnServer = serve(cdnSvc.app.fetch);
// Skipped (BROWSER.skip): the tests are ignored, and no browser is launched.
const browser = BROWSER.skip ? null : await launchBrowser();
const auth = await authHeader(svc.app);
const TOKEN = auth.authorization.slice("Bearer ".length);

Deno.test.afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server.close();
    await cdnServer.close();
    await cdnSvc.close();
    await svc.close();
    pool.close();
  }
});
// If the run is cut short, at least do not leave chromium behind.
addEventListener("unload", () => void browser?.close().catch(() => {}));

// ---- seed images through the API ----

async function seed(bytes: Uint8Array, tags: string[]): Promise<ImageDto> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

/** Runs `fn` over `items`, `n` at a time, keeping the order of the results. */
async function inBatches<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += n) {
    out.push(...await Promise.all(items.slice(i, i + n).map(fn)));
  }
  return out;
}

// Oldest first: 45 fillers (so the library has a second page), the filter set, then the gallery.
const FACES: Face[] = ["happy", "surprised", "wink", "sad", "angry"];
/** `#rrggbb` of a hue (degrees) at a fixed saturation, for `l` lightness in [0, 1]. */
const hue = (h: number, l: number) => {
  const a = 0.6 * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255).toString(16).padStart(2, "0");
  };
  return `#${f(0)}${f(8)}${f(4)}`;
};
const fillers = await inBatches(
  Array.from({ length: 45 }, (_, i) => i),
  8,
  async (i) =>
    await seed(
      await face(FACES[i % 5], 160, 120, hue(i * 8, 0.8), hue(i * 8 + 40, 0.45)),
      i % 3 ? ["filler"] : ["filler", "misc"],
    ),
);
const [onlyAlpha, onlyBeta, both1, both2] = await inBatches(
  [["alpha"], ["beta"], ["alpha", "beta"], ["alpha", "beta", "gamma"]].map((t, i) =>
    [t, i] as const
  ),
  4,
  async ([tags, i]) =>
    await seed(await face("wink", 200, 150, hue(i * 90, 0.8), "#1971c2"), [...tags]),
);
const forEditing = await seed(await face("happy", 320, 240, "#c3fae8", "#099268"), ["edit_me"]);
const forDeleting = await seed(await face("sad", 320, 240, "#ffdeeb", "#a61e4d"), ["delete_me"]);
const GALLERY: [Face, number, number, string, string, string[]][] = [
  ["happy", 480, 360, "#74c0fc", "#4263eb", ["happy", "smile"]],
  ["surprised", 360, 480, "#ffa8a8", "#e03131", ["surprised", "shocked"]],
  ["sad", 480, 360, "#a5d8ff", "#1864ab", ["sad"]],
  ["wink", 400, 400, "#b2f2bb", "#2b8a3e", ["happy", "wink"]],
  ["angry", 480, 320, "#ffc078", "#d9480f", ["angry"]],
  ["surprised", 480, 360, "#e599f7", "#862e9c", ["surprised"]],
  ["happy", 360, 480, "#ffec99", "#f08c00", ["happy", "sunny"]],
  ["sad", 400, 400, "#ced4da", "#495057", ["sad", "rainy"]],
  ["wink", 480, 360, "#96f2d7", "#0c8599", ["wink", "smile"]],
  ["surprised", 480, 360, "#ffd8a8", "#e8590c", ["surprised", "happy"]],
  ["happy", 400, 400, "#d0bfff", "#5f3dc4", ["happy"]],
  ["angry", 360, 480, "#ff8787", "#c92a2a", ["angry", "shocked"]],
];
const gallery = await inBatches(
  GALLERY,
  6,
  async ([kind, w, h, c1, c2, tags]) => await seed(await face(kind, w, h, c1, c2), tags),
);
assert.ok(fillers.every((i) => i.thumbnail_key !== null), "real thumbnails were made");

// ---- helpers ----

async function api<T>(path: string, app: TestService = svc): Promise<T> {
  const res = await app.app.request(path);
  assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
  return await res.json();
}

async function apiStatus(path: string): Promise<number> {
  const res = await svc.app.request(path);
  await res.body?.cancel();
  return res.status;
}

/** Every image carrying all `tags`, newest first, through the API's cursor pages. */
async function listAll(tags: string[] = []): Promise<ImageDto[]> {
  const all: ImageDto[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: "100" });
    if (tags.length) q.set("tags", tags.join(","));
    if (cursor) q.set("cursor", cursor);
    const page: ImagePage = await api(`/api/v1/images?${q}`);
    all.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

let ipCounter = 0;

interface Ctx {
  context: BrowserContext;
  page: Page;
  base: string;
  errors: PageError[];
}

interface CtxOptions {
  /** Start signed in with a real token (set in localStorage before any page script runs). */
  signedIn?: boolean;
  /** The service to browse (default: the proxy-URL one). */
  base?: string;
  /** Console errors that are expected (they are dropped before the no-error check). */
  expected?: (e: PageError) => boolean;
}

/** A test in a fresh context; fails on any console error or uncaught exception not expected. */
function browserTest(name: string, opts: CtxOptions, fn: (c: Ctx) => Promise<void>) {
  const ignore = BROWSER.skip;
  Deno.test({ name, ignore, sanitizeOps: false, sanitizeResources: false }, async () => {
    const base = opts.base ?? server.url;
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      ipCounter++;
      await context.setExtraHTTPHeaders({ "X-Real-IP": `198.51.100.${ipCounter}` });
      if (opts.signedIn) {
        await context.addInitScript(([key, token]) => {
          localStorage.setItem(key, token);
          localStorage.setItem(`${key}_expires_at`, String(Date.now() + 3_600_000));
        }, [TOKEN_KEY, TOKEN]);
      }
      const page = await context.newPage();
      // Generous: under `--parallel` on two busy cores an upload through the one-worker pool,
      // or a first island load, can take many seconds. A wait only ends early when it succeeds.
      page.setDefaultTimeout(WAIT_MS);
      const errors = collectErrors(page);
      await fn({ context, page, base, errors });
      const unexpected = errors.filter((e) => !opts.expected?.(e));
      assert.deepEqual(unexpected, [], "console errors");
    } finally {
      await context.close();
    }
  });
}

/** Short ids of the library grid, in order. */
const gridIds = (page: Page) =>
  page.locator(".grid a").evaluateAll((as) =>
    as.map((a) => a.getAttribute("href")!.replace(/^\/i\//, ""))
  );

/** Waits until every image in the viewport has loaded (and decoded to a real size). */
const imagesInViewLoaded = (page: Page) =>
  page.waitForFunction(() =>
    [...document.images]
      .filter((img) => img.getBoundingClientRect().top < innerHeight)
      .every((img) => img.complete && img.naturalWidth > 0)
  );

const ids = (images: ImageDto[]) => images.map((i) => i.short_id);

// ---- tests ----

browserTest(
  "the library shows the newest images first, and it and a detail page render (screenshots kept)",
  {},
  async ({ page, base }) => {
    await page.goto(`${base}/`);
    await hydrated(page);
    await imagesInViewLoaded(page);
    // The newest images come first, as the API lists them, served as real thumbnails through
    // the proxy; the gallery (seeded last) is on the first page, whatever other tests uploaded
    // before this one ran.
    const grid = await gridIds(page);
    const listed = ids(await listAll());
    assert.deepEqual(grid, listed.slice(0, grid.length));
    const inGallery = (id: string) => ids(gallery).includes(id);
    assert.deepEqual(grid.filter(inGallery).sort(), ids(gallery).sort());
    // The README's docs/screenshot-library.png is a copy of this artifact, refreshed by hand.
    await screenshot(page, "library.png");

    await page.goto(`${base}/i/${gallery[1].short_id}`);
    await hydrated(page);
    await imagesInViewLoaded(page);
    await screenshot(page, "detail.png");
  },
);

browserTest("the library grid shows thumbnails, not originals: at most 400 px", {}, async ({
  page,
  base,
}) => {
  await page.goto(`${base}/`);
  await hydrated(page);
  await imagesInViewLoaded(page);
  // Every gallery original is larger than 400 px on its longest side (360-480 px).
  const shown = await page.locator(".grid img").evaluateAll((imgs) =>
    (imgs as HTMLImageElement[]).slice(0, 12).map((img) => ({
      src: img.getAttribute("src")!,
      side: Math.max(img.naturalWidth, img.naturalHeight),
    }))
  );
  assert.equal(shown.length, 12);
  for (const { src, side } of shown) {
    assert.match(src, /\/api\/v1\/images\/\w{8}\/thumbnail$/);
    assert.ok(side > 0 && side <= 400, `${src}: ${side} px`);
  }
  const sides = gallery.map((g) => Math.max(g.width, g.height));
  assert.ok(sides.filter((s) => s > 400).length >= 8, "most originals are larger than that");
  assert.ok(shown.some(({ side }) => side === 400), "a larger original was scaled to 400 px");
});

browserTest(
  "every route renders, signed out and signed in, without console errors",
  {},
  async ({ page, base, context }) => {
    const id = gallery[0].short_id;
    const visit = async (path: string, check: () => Promise<unknown>) => {
      const res = await page.goto(`${base}${path}`);
      assert.equal(res?.status(), 200, path);
      await hydrated(page);
      await check();
    };
    await visit("/", async () => {
      assert.ok(await page.locator(".grid img").count() >= 50);
      await page.getByRole("link", { name: "Browse tags" }).waitFor();
    });
    await visit("/?tags=happy", () => page.getByLabel(/Search tags and the words/).waitFor());
    await visit("/tags", () => page.getByRole("heading", { name: "Tags" }).waitFor());
    await visit(`/i/${id}`, async () => {
      await page.getByRole("button", { name: "Copy link" }).waitFor();
      assert.equal(await page.locator("figure img").getAttribute("src"), gallery[0].file_url);
    });
    await visit("/login", () => page.getByRole("heading", { name: "Sign in" }).waitFor());
    await visit("/login?next=/tags", () => page.getByLabel("Password").waitFor());
    // Signed in (a real token), the upload page and the write controls render.
    await page.evaluate(([key, token]) => {
      localStorage.setItem(key, token);
      localStorage.setItem(`${key}_expires_at`, String(Date.now() + 3_600_000));
    }, [TOKEN_KEY, TOKEN]);
    await visit("/upload", async () => {
      await page.getByRole("heading", { name: "Upload" }).waitFor();
      await page.getByLabel("Tags for this batch (comma-separated)").waitFor();
      assert.equal(await page.locator("input[type=file]").count(), 1);
    });
    await visit(`/i/${id}`, () => page.getByRole("button", { name: "Edit tags" }).waitFor());
    await visit("/", () => page.getByRole("button", { name: "Sign out" }).waitFor());
    assert.equal(context.pages().length, 1);
  },
);

browserTest(
  "an unknown route shows the not-found page with status 404",
  // Chrome reports the 404 of the document itself on the console.
  { expected: (e) => HTTP_ERROR.exec(e.text)?.[1] === "404" && !e.url.includes("/api/") },
  async ({ page, base, errors }) => {
    for (const path of ["/no/such/page", "/i/ZZZZZZZZ", "/i/not-an-id", "/tags/extra"]) {
      const res = await page.goto(`${base}${path}`);
      assert.equal(res?.status(), 404, path);
      await page.getByRole("heading", { name: "Page not found" }).waitFor();
      assert.equal(await page.locator("script").count(), 0, "the 404 page ships no script");
      await page.getByRole("link", { name: "Go to the library" }).waitFor();
    }
    assert.ok(errors.every((e) => HTTP_ERROR.test(e.text)));
  },
);

browserTest("the library reads ?tags= on load and shows only images with all of them", {}, async ({
  page,
  base,
}) => {
  const expected = await listAll(["alpha", "beta"]);
  assert.deepEqual(ids(expected).sort(), [both1.short_id, both2.short_id].sort());
  await page.goto(`${base}/?tags=alpha,beta`);
  await hydrated(page);
  assert.deepEqual(await gridIds(page), ids(expected));
  assert.equal(await page.inputValue("#tag-filter"), "alpha, beta");
  for (const other of [onlyAlpha, onlyBeta]) {
    assert.equal(await page.locator(`a[href="/i/${other.short_id}"]`).count(), 0);
  }
  // The single-tag filter of the same page has the image that carries only alpha.
  await page.goto(`${base}/?tags=alpha`);
  await hydrated(page);
  assert.deepEqual(await gridIds(page), ids(await listAll(["alpha"])));
  assert.ok((await gridIds(page)).includes(onlyAlpha.short_id));
  // No match: the empty state.
  await page.goto(`${base}/?tags=alpha,angry`);
  await page.getByText("Nothing found for alpha, angry.").waitFor();
});

browserTest(
  "the library loads the next page on scroll and filters from the keyboard",
  {},
  async ({ page, base }) => {
    const all = await listAll();
    assert.ok(all.length > 50);
    const res = await page.goto(`${base}/`);
    // The server renders the first page; the island loads the rest by cursor.
    const served = [...(await res!.text()).matchAll(/<a href="\/i\/(\w{8})"/g)].map((m) => m[1]);
    assert.deepEqual(served, ids(all).slice(0, 50));
    await hydrated(page);
    await page.locator(".more").scrollIntoViewIfNeeded();
    await page.waitForFunction(
      (n) => document.querySelectorAll(".grid img").length === n,
      all.length,
    );
    assert.deepEqual(await gridIds(page), ids(all));
    await page.evaluate(() => scrollTo(0, 0));
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "tag-filter");
    await page.keyboard.type("surp");
    await page.locator("#tag-filter-options li", { hasText: "surprised" }).waitFor();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(await page.inputValue("#tag-filter"), "surprised, ");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${base}/?tags=surprised`);
    const surprised = ids(await listAll(["surprised"]));
    await page.waitForFunction(
      (n) => document.querySelectorAll(".grid img").length === n,
      surprised.length,
    );
    assert.deepEqual(await gridIds(page), surprised);
    await page.goBack();
    await page.waitForURL(`${base}/`);
    await page.waitForFunction(() => document.querySelectorAll(".grid img").length >= 50);
    assert.deepEqual((await gridIds(page)).slice(0, 50), ids(all).slice(0, 50));
  },
);

browserTest(
  "/tags lists tags by image count and a tag opens /?tags=<name>",
  {},
  async ({ page, base }) => {
    const expected: TagDto[] = await api("/api/v1/tags?sort=count_desc&limit=500");
    await page.goto(`${base}/tags`);
    await hydrated(page);
    const shown = await page.locator(".tag-list li a").evaluateAll((as) =>
      as.map((a) => ({
        name: a.firstChild!.textContent!.trim(),
        image_count: Number(a.querySelector(".count")!.textContent),
      }))
    );
    assert.deepEqual(shown, expected);
    for (let i = 1; i < shown.length; i++) {
      assert.ok(shown[i - 1].image_count >= shown[i].image_count, "sorted by count");
    }
    assert.equal(shown[0].name, "filler");
    const happy = shown.find((t) => t.name === "happy")!;
    assert.ok(happy.image_count >= 5);

    // Search narrows the list; selecting a tag opens the filtered library.
    await page.getByLabel("Search tags").fill("hap");
    await page.waitForURL(`${base}/tags?q=hap`);
    await page.waitForFunction(() => document.querySelectorAll(".tag-list li").length === 1);
    await page.getByRole("link", { name: /^happy/ }).click();
    await page.waitForURL(`${base}/?tags=happy`);
    await hydrated(page);
    assert.deepEqual(await gridIds(page), ids(await listAll(["happy"])));
    assert.equal((await gridIds(page)).length, happy.image_count);

    await page.goto(`${base}/tags`);
    await page.locator(".tag-list a").first().click();
    await page.waitForURL(`${base}/?tags=filler`);
    assert.equal(await page.locator(".grid img").count(), 45);
  },
);

browserTest(
  "the detail page of a visitor: facts, tags, copy buttons, and no write controls in the DOM",
  {},
  async ({ page, base, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const image: ImageDto = await api(`/api/v1/images/${gallery[3].short_id}`);
    await page.goto(`${base}/i/${image.short_id}`);
    await hydrated(page);
    await page.getByText(`${image.width} × ${image.height} px`).waitFor();
    await page.getByText("PNG", { exact: true }).waitFor();
    const tagLinks = await page.locator(".image-controls .tag-list a").evaluateAll((as) =>
      as.map((a) => [a.textContent, a.getAttribute("href")])
    );
    assert.deepEqual(tagLinks, image.tags.map((t) => [t.name, `/?tags=${t.name}`]));
    // The copy buttons prove the island is hydrated (and its token check has run).
    await page.getByRole("button", { name: "Copy Markdown" }).click();
    await page.getByText("Copied Markdown").waitFor();
    // The direct link (issue 18), on this page's origin.
    const direct = `${base}/${image.short_id}.png`;
    assert.equal(
      await page.evaluate(() => navigator.clipboard.readText()),
      `![happy, wink](${direct})`,
    );
    await page.getByRole("button", { name: "Copy link" }).click();
    await page.getByText("Copied link").waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), direct);
    // Not hidden: absent.
    assert.equal(await page.locator(".write-controls").count(), 0);
    for (const name of ["Edit tags", "Delete", "Save tags", "Yes, delete"]) {
      assert.equal(await page.getByRole("button", { name, includeHidden: true }).count(), 0, name);
    }
    const html = await page.content();
    assert.doesNotMatch(html, /write-controls|Edit tags|Yes, delete/);
    await page.getByRole("link", { name: "Sign in" }).waitFor();
  },
);

browserTest(
  "/upload sends a visitor to sign in; a wrong password shows the error; success returns to next",
  {
    // The wrong password is a 401 of the login endpoint.
    expected: (e) => HTTP_ERROR.exec(e.text)?.[1] === "401" && e.url.endsWith("/api/v1/auth/token"),
  },
  async ({ page, base }) => {
    await page.goto(`${base}/upload`);
    await page.waitForURL(`${base}/login?next=/upload`);
    assert.equal(await page.locator("input[type=file]").count(), 0);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("Wrong username or password").waitFor();
    assert.equal(page.url(), `${base}/login?next=/upload`);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), TOKEN_KEY), null);

    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/upload`);
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    await page.locator("input[type=file]").waitFor({ state: "attached" });
    const token = await page.evaluate((k) => localStorage.getItem(k), TOKEN_KEY);
    assert.ok(token, "token stored");
    const me = await svc.app.request("/api/v1/images/nope0000/tags", {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ tags: ["x"] }),
    });
    assert.equal(me.status, 404, "the stored token is accepted by the API");
    await me.body?.cancel();

    // Signing out on /upload leaves the page.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/`);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), TOKEN_KEY), null);
  },
);

browserTest(
  "after signing in, the page's API requests carry Authorization: Bearer",
  {},
  async ({ page, base }) => {
    const requests: { url: string; auth: string | undefined; signedIn: boolean }[] = [];
    let signedIn = false;
    page.on("request", (req) => {
      const path = new URL(req.url()).pathname;
      if (path.startsWith("/api/")) {
        requests.push({ url: req.url(), auth: req.headers()["authorization"], signedIn });
      }
      // Everything after the login request may carry the token.
      if (path === "/api/v1/auth/token") signedIn = true;
    });
    const filterBy = async (text: string) => {
      await page.locator("#tag-filter").fill(text);
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await page.waitForURL(`${base}/?tags=${text}`);
      await page.waitForFunction(() => document.querySelector(".library")?.ariaBusy === "false");
    };
    await page.goto(`${base}/`);
    await hydrated(page);
    await filterBy("sad");

    await page.goto(`${base}/login?next=/`);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/`);
    const token = await page.evaluate((k) => localStorage.getItem(k), TOKEN_KEY);
    assert.ok(token);
    await hydrated(page);
    await filterBy("happy");
    await page.goto(`${base}/tags`);
    await hydrated(page);
    await page.getByLabel("Search tags").fill("sa");
    await page.waitForURL(`${base}/tags?q=sa`);
    await page.locator(".tag-list a", { hasText: "sad" }).waitFor();

    const isCall = (url: string) => !/\/(file|thumbnail)$/.test(new URL(url).pathname);
    const before = requests.filter((r) => !r.signedIn && isCall(r.url));
    const after = requests.filter((r) => r.signedIn && isCall(r.url));
    assert.ok(before.some((r) => r.url.includes("/api/v1/images?")), "an anonymous call");
    assert.ok(before.some((r) => r.url.endsWith("/api/v1/auth/token")), "the login call");
    assert.deepEqual(before.filter((r) => r.auth), [], "no bearer before signing in");
    assert.ok(after.some((r) => r.url.includes("/api/v1/images?")), "a library call");
    assert.ok(after.some((r) => r.url.includes("/api/v1/tags?")), "a tags call");
    assert.deepEqual(
      after.filter((r) => r.auth !== `Bearer ${token}`),
      [],
      "every API call after signing in carries the bearer",
    );
  },
);

/** A PNG of random pixels (incompressible), `w`×`h`. */
async function noise(w: number, h: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(w * h * 3);
  for (let at = 0; at < pixels.length; at += 65536) {
    crypto.getRandomValues(pixels.subarray(at, at + 65536));
  }
  const img = sharp(pixels, { raw: { width: w, height: h, channels: 3 } });
  return new Uint8Array(await img.png({ compressionLevel: 0 }).toBuffer());
}

browserTest(
  "an upload through the UI shows progress and results, and the images are in the API",
  {
    signedIn: true,
    // The refused files are answered 413 and 415.
    expected: (e) => ["413", "415"].includes(HTTP_ERROR.exec(e.text)?.[1] ?? ""),
  },
  async ({ page, base }) => {
    const png = await makeImage("png", 300, 200);
    const jpeg = await makeImage("jpeg", 200, 300);
    const big = await noise(700, 700);
    assert.ok(big.length > 1_048_576);
    const dup: Uint8Array = new Uint8Array(
      await (await svc.app.request(gallery[0].file_url)).arrayBuffer(),
    );
    const file = (name: string, mimeType: string, bytes: Uint8Array) => ({
      name,
      mimeType,
      buffer: Buffer.from(bytes),
    });
    await page.goto(`${base}/upload`);
    await hydrated(page);
    await page.getByLabel("Tags for this batch (comma-separated)").fill("uploaded_ui, Fresh One");
    await page.locator("input[type=file]").setInputFiles([
      file("first.png", "image/png", png),
      file("second.jpg", "image/jpeg", jpeg),
      file("again.png", "image/png", dup),
      file("huge.png", "image/png", big),
      file("notes.png", "image/png", new TextEncoder().encode("not an image at all")),
    ]);
    const row = (name: string) => page.locator(".uploads li", { hasText: name });
    const expectations: [string, string, string][] = [
      ["first.png", "done", "Uploaded"],
      ["second.jpg", "done", "Uploaded"],
      ["again.png", "done", "Already here, tagged"],
      ["huge.png", "failed", "Too large (max 1 MB)"],
      ["notes.png", "failed", "Not a supported image"],
    ];
    for (const [name, state, text] of expectations) {
      await row(name).locator(".result", { hasText: text }).waitFor();
      assert.equal(await row(name).getAttribute("class"), state, name);
      assert.equal(
        await row(name).locator("progress").evaluate((p: HTMLProgressElement) => p.value),
        1,
      );
    }
    assert.equal(await page.locator(".uploads progress").count(), 5);
    const viewId = async (name: string) =>
      (await row(name).getByRole("link", { name: "View" }).getAttribute("href"))!.slice(3);
    assert.equal(await viewId("again.png"), gallery[0].short_id);
    assert.equal(await row("huge.png").getByRole("link").count(), 0);

    for (
      const [name, bytes, type] of [["first.png", png, "image/png"], [
        "second.jpg",
        jpeg,
        "image/jpeg",
      ]] as const
    ) {
      const id = await viewId(name);
      const image: ImageDto = await api(`/api/v1/images/${id}`);
      assert.deepEqual(image.tags.map((t) => t.name).sort(), ["fresh_one", "uploaded_ui"]);
      assert.equal(image.content_type, type);
      assert.ok(image.thumbnail_key, "thumbnail made");
      const stored = new Uint8Array(await (await svc.app.request(image.file_url)).arrayBuffer());
      assert.deepEqual(stored, bytes);
    }
    // The duplicate got the batch's tags added (201 new, 200 existing with the tags added).
    assert.deepEqual(
      ids(await listAll(["uploaded_ui"])).sort(),
      [await viewId("first.png"), await viewId("second.jpg"), gallery[0].short_id].sort(),
    );

    // The new image opens from its result row.
    const firstId = await viewId("first.png");
    await row("first.png").getByRole("link", { name: "View" }).click();
    await page.waitForURL(`${base}/i/${firstId}`);
    await page.getByRole("button", { name: "Edit tags" }).waitFor();
  },
);

browserTest(
  "images dropped on the upload area or pasted into the page are uploaded",
  { signedIn: true },
  async ({ page, base }) => {
    const dropped = await makeImage("png", 240, 180);
    const pasted = await makeImage("jpeg", 180, 240);
    await page.goto(`${base}/upload`);
    await hydrated(page);
    await page.getByLabel("Tags for this batch (comma-separated)").fill("dropped_or_pasted");
    const zone = page.locator(".dropzone");
    /** Fires `type` with a DataTransfer holding these files, as the browser does. */
    const fire = (
      target: "zone" | "document",
      type: string,
      files: { name: string; type: string; bytes: number[] }[],
    ) =>
      page.evaluate(({ target, type, files }) => {
        const dt = new DataTransfer();
        for (const f of files) {
          dt.items.add(new File([new Uint8Array(f.bytes)], f.name, { type: f.type }));
        }
        const init = { bubbles: true, cancelable: true };
        const event = type === "paste"
          ? new ClipboardEvent(type, { ...init, clipboardData: dt })
          : new DragEvent(type, { ...init, dataTransfer: dt });
        const at = target === "zone" ? document.querySelector(".dropzone")! : document.body;
        return at.dispatchEvent(event);
      }, { target, type, files });
    const png = { name: "dropped.png", type: "image/png", bytes: [...dropped] };
    await fire("zone", "dragover", [png]);
    assert.match((await zone.getAttribute("class"))!, /\bover\b/, "the area shows a drop");
    await fire("zone", "drop", [png]);
    assert.doesNotMatch((await zone.getAttribute("class"))!, /\bover\b/);
    const text = {
      name: "notes.txt",
      type: "text/plain",
      bytes: [...new TextEncoder().encode("hi")],
    };
    const jpeg = { name: "pasted.jpg", type: "image/jpeg", bytes: [...pasted] };
    // Not cancelled: the page takes the paste (only its image; text is left alone).
    assert.equal(await fire("document", "paste", [jpeg, text]), false, "the paste was taken");
    const row = (name: string) => page.locator(".uploads li", { hasText: name });
    for (const name of ["dropped.png", "pasted.jpg"]) {
      await row(name).locator(".result", { hasText: "Uploaded" }).waitFor();
      assert.equal(await row(name).getAttribute("class"), "done", name);
    }
    assert.equal(await page.locator(".uploads li").count(), 2, "the text file was not uploaded");
    const viewId = async (name: string) =>
      (await row(name).getByRole("link", { name: "View" }).getAttribute("href"))!.slice(3);
    for (const [name, bytes] of [["dropped.png", dropped], ["pasted.jpg", pasted]] as const) {
      const image: ImageDto = await api(`/api/v1/images/${await viewId(name)}`);
      assert.deepEqual(image.tags.map((t) => t.name), ["dropped_or_pasted"]);
      const stored = new Uint8Array(await (await svc.app.request(image.file_url)).arrayBuffer());
      assert.deepEqual(stored, bytes, name);
    }
  },
);

browserTest(
  "the detail page signed in: edit tags, then delete after the confirmation",
  // The deleted image's page is a 404 document at the end.
  {
    signedIn: true,
    expected: (e) => HTTP_ERROR.exec(e.text)?.[1] === "404" && e.url.includes("/i/"),
  },
  async ({ page, base }) => {
    const dialogs: string[] = [];
    page.on("dialog", (d) => (dialogs.push(d.message()), d.accept()));
    await page.goto(`${base}/i/${forEditing.short_id}`);
    await page.getByRole("button", { name: "Edit tags" }).click();
    const input = page.getByLabel("Tags (comma-separated)");
    assert.equal(await input.inputValue(), "edit_me");
    await input.fill("Edited, reaction Face");
    await page.getByRole("button", { name: "Save tags" }).click();
    await page.getByText("Tags saved").waitFor();
    const edited: ImageDto = await api(`/api/v1/images/${forEditing.short_id}`);
    assert.deepEqual(edited.tags.map((t) => t.name), ["edited", "reaction_face"]);
    assert.deepEqual(
      await page.locator(".image-controls .tag-list a").allTextContents(),
      ["edited", "reaction_face"],
    );
    await page.reload();
    await page.locator('.image-controls a[href="/?tags=reaction_face"]').waitFor();

    // Delete asks first: "Keep it" keeps the image.
    await page.goto(`${base}/i/${forDeleting.short_id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("group", { name: "Confirm delete" }).waitFor();
    assert.equal(await apiStatus(`/api/v1/images/${forDeleting.short_id}`), 200);
    await page.getByRole("button", { name: "Keep it" }).click();
    assert.equal(await page.getByRole("button", { name: "Yes, delete" }).count(), 0);
    assert.equal(await apiStatus(`/api/v1/images/${forDeleting.short_id}`), 200);

    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.waitForURL(`${base}/`);
    assert.equal(await apiStatus(`/api/v1/images/${forDeleting.short_id}`), 404);
    assert.ok(!ids(await listAll()).includes(forDeleting.short_id));
    assert.equal(await page.locator(`a[href="/i/${forDeleting.short_id}"]`).count(), 0);
    assert.deepEqual(dialogs, [], "the confirmation is in the page, not a dialog");
    const res = await page.goto(`${base}/i/${forDeleting.short_id}`);
    assert.equal(res?.status(), 404);
  },
);

browserTest(
  "a rejected token is dropped and the visitor is sent to sign in",
  { expected: (e) => HTTP_ERROR.exec(e.text)?.[1] === "401" },
  async ({ page, base }) => {
    const id = gallery[4].short_id;
    await page.goto(`${base}/login`);
    await page.evaluate((k) => localStorage.setItem(k, "not-a-valid-token"), TOKEN_KEY);
    await page.goto(`${base}/i/${id}`);
    await page.getByRole("button", { name: "Edit tags" }).click();
    await page.getByLabel("Tags (comma-separated)").fill("hacked");
    await page.getByRole("button", { name: "Save tags" }).click();
    await page.waitForURL(`${base}/login?next=/i/${id}`);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), TOKEN_KEY), null);
    const image: ImageDto = await api(`/api/v1/images/${id}`);
    assert.deepEqual(image.tags.map((t) => t.name), ["angry"]);
  },
);

browserTest(
  "repeated wrong passwords show the lockout message",
  {
    expected: (e) =>
      ["401", "429"].includes(HTTP_ERROR.exec(e.text)?.[1] ?? "") &&
      e.url.endsWith("/api/v1/auth/token"),
  },
  async ({ page, base }) => {
    await page.goto(`${base}/login`);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("wrong");
    for (let i = 1; i < Number(ENV.LOGIN_MAX_FAILURES); i++) {
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("Wrong username or password").waitFor();
      await page.getByRole("button", { name: "Sign in" }).and(page.locator(":enabled")).waitFor();
    }
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Too many attempts, try again in 15 minutes").waitFor();
    // Locked: even the right password is refused, with the same message.
    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Too many attempts, try again in 15 minutes").waitFor();
    assert.equal(page.url(), `${base}/login`);
  },
);

browserTest(
  "with S3_PUBLIC_BASE_URL the <img> sources are the API's CDN URLs",
  {
    base: cdnServer.url,
    // Loads of the CDN are aborted here, so nothing leaves the machine.
    expected: (e) => e.url.startsWith(CDN) || e.text.includes("cdn.example.test"),
  },
  async ({ page, base, context }) => {
    const blocked: string[] = [];
    await context.route("https://cdn.example.test/**", (route) => {
      blocked.push(route.request().url());
      return route.abort("blockedbyclient");
    });
    const leaks: string[] = [];
    page.on("request", (req) => {
      const host = new URL(req.url()).hostname;
      if (host !== "127.0.0.1" && host !== "cdn.example.test") leaks.push(req.url());
    });
    const all: ImageDto[] = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const page: ImagePage = await api(`/api/v1/images?limit=100&cursor=${cursor}`, cdnSvc);
      all.push(...page.items);
      cursor = page.next_cursor;
    }
    assert.ok(all.every((i) => i.thumbnail_url.startsWith(`${CDN}/`)));
    await page.goto(`${base}/`);
    await hydrated(page);
    // Every card, the server's first page and the island's later pages alike.
    await page.locator(".more").scrollIntoViewIfNeeded();
    await page.waitForFunction(
      (n) => document.querySelectorAll(".grid img").length === n,
      all.length,
    );
    const srcs = await page.locator(".grid img").evaluateAll((imgs) =>
      imgs.map((i) => i.getAttribute("src"))
    );
    assert.deepEqual(srcs, all.map((i) => i.thumbnail_url));

    const image: ImageDto = await api(`/api/v1/images/${gallery[2].short_id}`, cdnSvc);
    assert.ok(image.file_url.startsWith(`${CDN}/`));
    await page.goto(`${base}/i/${image.short_id}`);
    await hydrated(page);
    assert.equal(await page.locator("figure img").getAttribute("src"), image.file_url);
    assert.equal(await page.locator("figure a").getAttribute("href"), image.file_url);
    // The proxy service renders its own paths for the same image.
    assert.equal(
      (await api<ImageDto>(`/api/v1/images/${image.short_id}`)).file_url,
      `/api/v1/images/${image.short_id}/file`,
    );
    assert.ok(blocked.some((u) => u === image.file_url), "the CDN load was attempted and blocked");
    assert.deepEqual(leaks, []);
  },
);
