/**
 * The board on a phone (issue 44), in Chromium with a phone's viewport and touch: installable
 * (manifest, icons, Chromium's own installability check), the service worker and the offline
 * library, sharing into the board (share target) and out of it (the share sheet, stubbed), search
 * by image with its limit, and previous/next through results.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { type BrowserContext, chromium, type Page } from "npm:playwright-core@1.65.1";
import sharp from "sharp";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService, TEST_PASSWORD } from "../_harness/app.ts";
import { authHeader, randomTag, upload } from "../_harness/images.ts";
import { makeSources, makeVariants } from "../_harness/similar_corpus.ts";
import {
  BROWSER,
  CHROMIUM_ARGS,
  collectErrors,
  ensureBuiltAssets,
  hydrated,
  launchBrowser,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";

await ensureBuiltAssets();

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
// The limit test's requests name their own address through the trusted proxy (127.0.0.1 here),
// so the other tests' searches never use up its budget, nor it theirs.
const svc = await startService({
  thumbnails: pool,
  env: { QUERY_IMAGES_PER_MINUTE: "3", LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1" },
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
    pool.close();
  }
});
addEventListener("unload", () => void browser.close().catch(() => {}));

/** A Pixel 7's screen. */
const PHONE = {
  viewport: { width: 412, height: 915 },
  deviceScaleFactor: 2.625,
  isMobile: true,
  hasTouch: true,
};

let lastAddress = 0;
/** A context of its own, on a phone; each gets its own address for the search limit. */
async function phone(opts: { signedIn?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    ...PHONE,
    extraHTTPHeaders: { "x-real-ip": `198.51.100.${++lastAddress}` },
  });
  if (opts.signedIn) {
    await context.addInitScript((t) => {
      localStorage.setItem("imageboard.token", t);
      localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
    }, TOKEN);
  }
  return context;
}

async function seed(bytes: Uint8Array, tags: string[] = []): Promise<string> {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return (await res.json()).short_id;
}

/** Waits until a service worker controls `page` (clients.claim() in static/sw.js). */
async function controlled(page: Page): Promise<void> {
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, {
    timeout: WAIT_MS,
  });
}

async function imageCount(): Promise<number> {
  return (await svc.db.sql`select count(*)::int as n from images`)[0].n;
}

let nextSeed = 71;
/** A photo and another picture of their own, and the photo's reposts named in `wanted`. */
async function ownPicture(...wanted: string[]) {
  const [photo, other] = await makeSources(2, nextSeed++);
  const reposts = await makeVariants(photo, undefined, wanted);
  return { photo, other, variant: (n: string) => reposts.find((v) => v.name.startsWith(n))!.bytes };
}

const gif = new Uint8Array(
  await sharp({ create: { width: 48, height: 32, channels: 3, background: "#c83" } })
    .composite([{
      input: await sharp({ create: { width: 16, height: 16, channels: 3, background: "#123" } })
        .png().toBuffer(),
      left: 8,
      top: 8,
    }])
    .gif().toBuffer(),
);

Deno.test("every page links the manifest, whose fields and icons hold; Chromium finds it installable", async () => {
  const id = await seed(gif, [randomTag("install")]);
  // Chromium never finds an app installable in an incognito profile (a plain new context).
  const profile = await Deno.makeTempDir({ prefix: "phone_profile_" });
  const context = await chromium.launchPersistentContext(profile, {
    ...PHONE,
    executablePath: BROWSER.path!,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await context.newPage();
    const errors = collectErrors(page);
    const cdp = await context.newCDPSession(page);
    for (const path of ["/", "/tags", `/i/${id}`, "/upload", "/offline"]) {
      await page.goto(server.url + path);
      await hydrated(page);
      assert.equal(
        await page.locator('link[rel="manifest"]').getAttribute("href"),
        "/manifest.webmanifest",
        path,
      );
      const description = await page.locator('meta[name="description"]').getAttribute("content");
      assert.ok(description && description.length > 40, `${path}: a meta description`);
      assert.ok(await page.locator('link[rel="apple-touch-icon"]').count() === 1, path);
      const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
      assert.deepEqual(installabilityErrors, [], path);
    }
    const res = await page.request.get(`${server.url}/manifest.webmanifest`);
    assert.equal(res.headers()["content-type"], "application/manifest+json");
    const manifest = await res.json();
    assert.equal(manifest.name, "Reactions");
    assert.equal(manifest.short_name, "Reactions");
    assert.equal(manifest.start_url, "/");
    assert.equal(manifest.scope, "/");
    assert.equal(manifest.display, "standalone");
    assert.match(manifest.theme_color, /^#[0-9a-f]{6}$/);
    assert.match(manifest.background_color, /^#[0-9a-f]{6}$/);
    assert.deepEqual(manifest.share_target, {
      action: "/share-target",
      method: "POST",
      enctype: "multipart/form-data",
      params: {
        title: "title",
        text: "text",
        url: "url",
        files: [{ name: "files", accept: ["image/*"] }],
      },
    });
    const icons = manifest.icons as { src: string; sizes: string; type: string; purpose: string }[];
    assert.deepEqual(icons.map((i) => `${i.sizes} ${i.purpose}`), [
      "192x192 any",
      "512x512 any",
      "512x512 maskable",
    ]);
    const touch = await page.locator('link[rel="apple-touch-icon"]').getAttribute("href");
    for (
      const [src, side] of [...icons.map((i) => [i.src, Number(i.sizes.split("x")[0])]), [
        touch,
        180,
      ]]
    ) {
      const icon = await page.request.get(server.url + src);
      assert.equal(icon.status(), 200, String(src));
      assert.equal(icon.headers()["content-type"], "image/png");
      const meta = await sharp(await icon.body()).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ["png", side, side], String(src));
    }
    // The page's CSP names the worker and the manifest (this origin only).
    const csp = (await page.request.get(`${server.url}/`)).headers()["content-security-policy"];
    assert.match(csp, /worker-src 'self'/);
    assert.match(csp, /manifest-src 'self'/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await Deno.remove(profile, { recursive: true });
  }
});

Deno.test("the service worker controls the page and, offline, the library shows the images viewed", async () => {
  const { photo } = await ownPicture();
  const id = await seed(photo.bytes, [randomTag("offline")]);
  const context = await phone({ signedIn: true });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await controlled(page);
    const sw = await page.request.get(`${server.url}/sw.js`);
    assert.equal(sw.headers()["cache-control"], "no-cache");
    assert.match(sw.headers()["content-type"], /^text\/javascript/);
    // Viewing an image keeps its thumbnail; the signed-in API answers are not kept.
    await page.goto(`${server.url}/i/${id}`);
    await hydrated(page);
    await page.waitForFunction(async (id) => {
      const cache = await caches.open("thumbs-v1");
      return (await cache.keys()).some((r) => r.url.endsWith(`/api/v1/images/${id}/thumbnail`));
    }, id);
    const kept = await page.evaluate(async () => {
      const urls: string[] = [];
      for (const name of await caches.keys()) {
        for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
      }
      return urls;
    });
    const api = kept.filter((p) => p.startsWith("/api/"));
    assert.ok(api.length > 0);
    assert.deepEqual(api.filter((p) => !/^\/api\/v1\/images\/\w{8}\/thumbnail$/.test(p)), []);
    assert.ok(kept.includes("/offline"), "the offline page is kept");

    await context.setOffline(true);
    await page.goto(`${server.url}/`);
    await page.getByText("You are offline").waitFor();
    const thumb = page.locator(`.offline-library a[href="/i/${id}"] img`);
    await thumb.waitFor();
    const loaded = await thumb.evaluate((img: HTMLImageElement) =>
      img.complete && img.naturalWidth > 0 ? true : img.decode().then(() => img.naturalWidth > 0)
    );
    assert.ok(loaded, "the viewed image's thumbnail shows offline");
  } finally {
    await context.close();
  }
});

Deno.test("a new build's worker takes over on the next load and drops the old shell", async () => {
  // The same service over a copy of the build whose worker this test changes (dev: re-read).
  const assetsDir = await Deno.makeTempDir({ prefix: "phone_sw_" });
  const built = new URL("../../_build/", import.meta.url).pathname;
  await new Deno.Command("cp", { args: ["-r", `${built}.`, assetsDir] }).output();
  const { createApp } = await import("../../wiring/app.ts");
  const own = serve(createApp(svc.services, { assetsDir, dev: true }).fetch);
  const context = await phone();
  try {
    const page = await context.newPage();
    await page.goto(`${own.url}/`);
    await controlled(page);
    const shells = () =>
      page.evaluate(async () => (await caches.keys()).filter((n) => n.startsWith("shell-")));
    const [before] = await shells();
    const worker = await Deno.readTextFile(`${assetsDir}/sw.js`);
    await Deno.writeTextFile(
      `${assetsDir}/sw.js`,
      worker.replace(/"version":"([0-9a-f]+)"/, '"version":"0ther0version"'),
    );
    await page.reload();
    await page.waitForFunction(async () => {
      const names = await caches.keys();
      return names.includes("shell-0ther0version") &&
        names.filter((n) => n.startsWith("shell-")).length === 1;
    });
    assert.notEqual(before, "shell-0ther0version");
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  } finally {
    await context.close();
    await own.close();
    await Deno.remove(assetsDir, { recursive: true });
  }
});

Deno.test("a share-target POST lands on the upload page with its files, after signing in, and uploads them", async () => {
  const tag = randomTag("shared");
  const context = await phone();
  try {
    const page = await context.newPage();
    const errors = collectErrors(page);
    // What the tag field holds in the very update that shows the shared files (a person may tap
    // Upload at once): a MutationObserver's callback runs right after that update.
    await page.addInitScript(() => {
      const seen = globalThis as { sharedTagsSeen?: string };
      new MutationObserver(() => {
        if (seen.sharedTagsSeen !== undefined || !document.querySelector(".shared-files")) return;
        seen.sharedTagsSeen = document.querySelector<HTMLInputElement>("#upload-tags")?.value;
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(`${server.url}/tags`);
    await controlled(page);
    // What Android does with the manifest's share_target: a multipart POST navigation.
    await page.evaluate(({ bytes, text }) => {
      const form = document.createElement("form");
      form.method = "POST";
      form.action = "/share-target";
      form.enctype = "multipart/form-data";
      const input = document.createElement("input");
      input.type = "file";
      input.name = "files";
      const files = new DataTransfer();
      files.items.add(new File([new Uint8Array(bytes)], "reaction.gif", { type: "image/gif" }));
      input.files = files.files;
      const note = document.createElement("input");
      note.name = "text";
      note.value = text;
      form.append(input, note);
      document.body.append(form);
      form.submit();
    }, { bytes: [...gif], text: `${tag}, #surprised https://example.com/x` });
    // Not signed in: the upload page's guard sends the person to sign in, and back.
    await page.waitForURL(/\/login\?next=\/upload%3Fshared%3D1$/);
    await hydrated(page);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill(TEST_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/upload\?shared=1$/);
    await page.getByText("One image was shared with the board").waitFor();
    const seen = await page.evaluate(() =>
      (globalThis as { sharedTagsSeen?: string }).sharedTagsSeen
    );
    assert.equal(seen, `${tag}, surprised`, "the tag field, when the shared files appeared");
    assert.equal(await page.locator("#upload-tags").inputValue(), `${tag}, surprised`);
    await page.getByRole("button", { name: "Upload the shared image" }).click();
    const row = page.locator(".uploads li").first();
    await row.getByText(/^(Uploaded|Already here)/).waitFor();
    const href = await row.locator("a", { hasText: "View" }).getAttribute("href");
    const stored = await (await svc.app.request(`/api/v1/images/${href!.slice(3)}`)).json();
    assert.equal(stored.content_type, "image/gif");
    assert.equal(stored.size_bytes, gif.length);
    assert.ok(stored.tags.some((t: { name: string }) => t.name === tag), "the suggested tag");
    // The inbox is emptied once the files are on their way.
    assert.equal(await page.evaluate(() => caches.has("share-inbox-v1")), false);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

Deno.test("without a service worker, the share target's POST says on the upload page why nothing came", async () => {
  const res = await svc.app.request("/share-target", { method: "POST", body: new FormData() });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/upload?share=unavailable");
  const context = await phone({ signedIn: true });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/upload?share=unavailable`);
    await page.getByText("The shared images did not arrive").waitFor();
  } finally {
    await context.close();
  }
});

Deno.test("Share hands the original file to the share sheet, on the image page and on a card", async () => {
  const tag = randomTag("share");
  const id = await seed(gif, [tag]);
  const context = await phone();
  try {
    // The share sheet, stubbed: what it was given, with the files' bytes.
    await context.addInitScript(() => {
      const w = window as unknown as { __shared: unknown[] };
      w.__shared = [];
      Object.assign(navigator, {
        canShare: (data: { files?: File[] }) => Array.isArray(data.files),
        share: async (data: { files?: File[]; url?: string }) => {
          const files = await Promise.all((data.files ?? []).map(async (f) => ({
            name: f.name,
            type: f.type,
            bytes: [...new Uint8Array(await f.arrayBuffer())],
          })));
          w.__shared.push({ files, url: data.url ?? null });
        },
      });
    });
    const page = await context.newPage();
    const errors = collectErrors(page);
    const shared = () =>
      page.evaluate(() => (window as unknown as { __shared: unknown[] }).__shared);
    const expected = {
      files: [{ name: `${id}.gif`, type: "image/gif", bytes: [...gif] }],
      url: null,
    };
    await page.goto(`${server.url}/i/${id}`);
    await hydrated(page);
    await page.locator(".image-controls").getByRole("button", { name: "Share", exact: true }).tap();
    await page.waitForFunction(() =>
      (window as unknown as { __shared: unknown[] }).__shared.length === 1
    );
    assert.deepEqual(await shared(), [expected]);

    await page.goto(`${server.url}/?tags=${tag}`);
    await hydrated(page);
    await page.getByRole("button", { name: /^Share / }).first().tap();
    await page.waitForFunction(() =>
      (window as unknown as { __shared: unknown[] }).__shared.length === 1
    );
    assert.deepEqual(await shared(), [expected]);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

Deno.test("where files cannot be shared the link is, and with no share sheet there is no button", async () => {
  const id = await seed(gif, [randomTag("link")]);
  const context = await phone();
  try {
    await context.addInitScript(() => {
      const w = window as unknown as { __shared: unknown[] };
      w.__shared = [];
      Object.assign(navigator, {
        canShare: () => false,
        share: (data: unknown) => (w.__shared.push(data), Promise.resolve()),
      });
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/i/${id}`);
    await hydrated(page);
    await page.locator(".image-controls").getByRole("button", { name: "Share", exact: true }).tap();
    await page.waitForFunction(() =>
      (window as unknown as { __shared: unknown[] }).__shared.length === 1
    );
    assert.deepEqual(
      await page.evaluate(() => (window as unknown as { __shared: unknown[] }).__shared),
      [
        { url: `${server.url}/${id}.gif` },
      ],
    );
  } finally {
    await context.close();
  }
  const desktop = await browser.newContext();
  try {
    const page = await desktop.newPage();
    await page.addInitScript(() => {
      delete (Navigator.prototype as unknown as { share?: unknown }).share;
    });
    await page.goto(`${server.url}/i/${id}`);
    await hydrated(page);
    assert.equal(await page.getByRole("button", { name: "Copy link" }).count(), 1);
    assert.equal(await page.getByRole("button", { name: "Share", exact: true }).count(), 0);
  } finally {
    await desktop.close();
  }
});

Deno.test("search by image in the library finds a recompressed copy, and not an unrelated picture", async () => {
  const { photo, other, variant } = await ownPicture("jpeg q30");
  const original = await seed(photo.bytes, [randomTag("original")]);
  const context = await phone();
  try {
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(`${server.url}/`);
    await hydrated(page);
    const chooser = page.locator(".image-search-button input[type=file]");
    await chooser.setInputFiles([
      { name: "screenshot.jpg", mimeType: "image/jpeg", buffer: Buffer.from(variant("jpeg q30")) },
    ]);
    const results = page.locator(".image-search");
    await results.getByText("Looks like").waitFor();
    assert.equal(await results.locator(`a[href="/i/${original}"]`).count(), 1);
    // The results are a list to move through: the image page opened from them says so.
    await results.locator(`a[href="/i/${original}"]`).tap();
    await page.waitForURL(`**/i/${original}`);
    await page.getByRole("navigation", { name: "Results" }).getByText("in Looks like").waitFor();

    await page.goto(`${server.url}/`);
    await hydrated(page);
    await page.locator(".image-search-button input[type=file]").setInputFiles([
      { name: "other.jpg", mimeType: "image/jpeg", buffer: Buffer.from(other.bytes) },
    ]);
    await page.getByText("Nothing on the board looks like this image.").waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

Deno.test("pasting an image into the search field searches by it; past the limit, 429 is explained", async () => {
  const { photo } = await ownPicture();
  // Small, so that four searches stay well inside the limit's minute on a loaded machine.
  const small = new Uint8Array(await sharp(photo.bytes).resize(96).png().toBuffer());
  await seed(small);
  const context = await phone();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await hydrated(page);
    const paste = () =>
      page.locator("#tag-filter").evaluate((input, bytes) => {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(bytes)], "pasted.png", { type: "image/png" }));
        input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true }));
      }, [...small]);
    const statuses: number[] = [];
    page.on("response", (r) => {
      if (r.url().endsWith("/search-by-image")) statuses.push(r.status());
    });
    for (let i = 0; i < 3; i++) {
      await paste();
      await page.locator(".image-search").getByText("Looks like").waitFor();
      await page.locator(".image-search").getByRole("button", { name: "Close" }).click();
    }
    await paste();
    await page.getByText(/^Too many image searches; try again in \d+ s$/).waitFor();
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  } finally {
    await context.close();
  }
});

Deno.test("the upload page checks each file first and offers the image the board already has", async () => {
  const { photo, variant } = await ownPicture("webp");
  const oldTag = randomTag("old");
  const original = await seed(photo.bytes, [oldTag]);
  const context = await phone({ signedIn: true });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/upload`);
    await hydrated(page);
    const newTag = randomTag("new");
    const before = await imageCount();
    await page.locator("#upload-tags").fill(newTag);
    await page.locator(".dropzone input[type=file]").setInputFiles([
      { name: "again.webp", mimeType: "image/webp", buffer: Buffer.from(variant("webp")) },
    ]);
    const row = page.locator(".uploads li").first();
    await row.getByText("The board already has this image").waitFor();
    assert.equal(await row.locator(`a[href="/i/${original}"]`).count(), 1);
    await row.getByRole("button", { name: `Add ${newTag} to it` }).tap();
    await row.getByText(`Tags added to ${original}`).waitFor();
    const tags = (await (await svc.app.request(`/api/v1/images/${original}`)).json()).tags;
    assert.deepEqual(tags.map((t: { name: string }) => t.name).sort(), [newTag, oldTag].sort());
    // Nothing was uploaded.
    assert.equal(await imageCount(), before);
  } finally {
    await context.close();
  }
});

Deno.test("the image page moves through the library's results by arrow keys and by swiping", async () => {
  const tag = randomTag("walk");
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const png = await sharp({
      create: { width: 40, height: 40, channels: 3, background: { r: 20 * i, g: 90, b: 200 } },
    })
      .png().toBuffer();
    ids.push(await seed(new Uint8Array(png), [tag]));
  }
  const [newest, middle, oldest] = ids.reverse(); // the library lists the newest first
  const context = await phone();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/?tags=${tag}`);
    await hydrated(page);
    await page.locator(`a[href="/i/${middle}"]`).tap();
    await page.waitForURL(`**/i/${middle}`);
    await hydrated(page);
    const nav = page.getByRole("navigation", { name: "Results" });
    await nav.getByText(`2 of 3 in ${tag}`).waitFor();
    assert.equal(
      await nav.getByRole("link", { name: "← Previous" }).getAttribute("href"),
      `/i/${newest}`,
    );
    assert.equal(
      await nav.getByRole("link", { name: "Next →" }).getAttribute("href"),
      `/i/${oldest}`,
    );
    await page.keyboard.press("ArrowRight");
    await page.waitForURL(`**/i/${oldest}`);
    await hydrated(page);
    await nav.getByText(`3 of 3 in ${tag}`).waitFor();
    await page.keyboard.press("ArrowLeft");
    await page.waitForURL(`**/i/${middle}`);
    await hydrated(page);
    await nav.getByText(`2 of 3 in ${tag}`).waitFor();
    // A swipe to the left brings the next image (with no forward history, so that no browser
    // gesture could have done it).
    const cdp = await context.newCDPSession(page);
    const touch = async (type: "touchStart" | "touchMove" | "touchEnd", x: number) =>
      await cdp.send("Input.dispatchTouchEvent", {
        type,
        touchPoints: type === "touchEnd" ? [] : [{ x, y: 400 }],
      });
    await touch("touchStart", 330);
    await touch("touchMove", 220);
    await touch("touchMove", 100);
    await touch("touchEnd", 100);
    await page.waitForURL(`**/i/${oldest}`);
  } finally {
    await context.close();
  }
});
