/**
 * UI tests in chromium against the real pages app and a fake /api/v1 (no database needed).
 * They check hydration without console errors (CSP violations included) and the islands.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Hono } from "hono";
import type { Browser, Page } from "playwright-core";
import { buildAssets } from "../../lib/islands/build.ts";
import { createPagesApp } from "../../routes/mod.ts";
import { collectErrors, launchBrowser, serve, type TestServer } from "./_browser.ts";
import { fakeApi, PNG } from "./_fake_api.ts";

/** Chrome logs every non-2xx fetch; expected API errors are not failures. */
const HTTP_ERROR = /^Failed to load resource: the server responded with a status of/;

async function start() {
  const assetsDir = await Deno.makeTempDir({ prefix: "ui_test_" });
  await buildAssets({ outDir: assetsDir, writeGen: false });
  const fake = fakeApi();
  const app = new Hono();
  app.route("/api/v1", fake.api);
  app.route("/", createPagesApp({ read: fake.read, assetsDir }));
  const server: TestServer = serve(app.fetch);
  const browser: Browser = await launchBrowser();
  const context = await browser.newContext();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  return {
    ...fake,
    url: server.url,
    context,
    async stop() {
      await browser.close();
      await server.close();
      await Deno.remove(assetsDir, { recursive: true });
    },
  };
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("the UI works in chromium", opts, async (t) => {
  const env = await start();
  let page: Page = await env.context.newPage();
  let errors = collectErrors(page);
  const unexpected = () => errors.filter((e) => !HTTP_ERROR.test(e));
  const hydrated = (p: Page) => p.waitForFunction(() => document.readyState === "complete");
  try {
    await t.step("library: first page, infinite scroll, keyboard filter", async () => {
      await page.goto(`${env.url}/`);
      await hydrated(page);
      assert.equal(await page.locator(".grid img").count(), 50);
      await page.locator(".more").scrollIntoViewIfNeeded();
      await page.waitForFunction(() => document.querySelectorAll(".grid img").length > 50);
      await page.keyboard.press("/");
      assert.equal(await page.evaluate(() => document.activeElement?.id), "tag-filter");
      await page.keyboard.type("ca");
      await page.locator("#tag-filter-options li").first().waitFor();
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      assert.equal(await page.inputValue("#tag-filter"), "cat, ");
      await page.keyboard.press("Enter");
      await page.waitForURL(`${env.url}/?tags=cat`);
      await page.waitForFunction(() => document.querySelectorAll(".grid img").length === 40);
      assert.deepEqual(unexpected(), []);
    });

    await t.step("tags page links to the filtered library", async () => {
      await page.goto(`${env.url}/tags`);
      await page.getByRole("link", { name: /^cat/ }).click();
      await page.waitForURL(`${env.url}/?tags=cat`);
      assert.deepEqual(unexpected(), []);
    });

    const id = env.read.images[5].short_id;
    await t.step("detail: copy buttons, no write controls when signed out", async () => {
      await page.goto(`${env.url}/i/${id}`);
      await hydrated(page);
      await page.getByRole("button", { name: "Copy Markdown" }).click();
      await page.getByText("Copied Markdown").waitFor();
      const clip = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(clip, `![dog](${env.url}/api/v1/images/${id}/file)`);
      assert.equal(await page.getByRole("button", { name: "Delete" }).count(), 0);
      assert.equal(await page.locator(".write-controls").count(), 0);
    });

    await t.step("upload is guarded; login errors; login returns to next", async () => {
      await page.goto(`${env.url}/upload`);
      await page.waitForURL(`${env.url}/login?next=/upload`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill("wrong");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("Wrong username or password").waitFor();
      await page.getByLabel("Username").fill("locked");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("Too many attempts, try again in 15 minutes").waitFor();
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill("secret");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${env.url}/upload`);
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      assert.deepEqual(unexpected(), []);
    });

    await t.step("upload: one request per file with a result in words", async () => {
      await page.getByLabel("Tags for this batch (comma-separated)").fill("new_tag");
      const file = (name: string) => ({ name, mimeType: "image/png", buffer: Buffer.from(PNG) });
      await page.locator("input[type=file]").setInputFiles(
        ["ok.png", "dup.png", "big.png", "bad.png"].map(file),
      );
      for (
        const text of ["Uploaded", "Already here", "Too large (max 20 MB)", "Not a supported image"]
      ) {
        await page.locator(".uploads .result", { hasText: text }).waitFor();
      }
      assert.equal(await page.locator(".uploads progress").count(), 4);
      const added = env.read.images.at(-1)!;
      assert.deepEqual(added.tags.map((t) => t.name), ["new_tag"]);
      assert.equal(await page.locator(`a[href="/i/${added.short_id}"]`).count(), 1);
    });

    await t.step("detail signed in: edit tags, delete with confirmation", async () => {
      await page.goto(`${env.url}/i/${id}`);
      await page.getByRole("button", { name: "Edit tags" }).click();
      await page.getByLabel("Tags (comma-separated)").fill("funny, dog");
      await page.getByRole("button", { name: "Save tags" }).click();
      await page.getByText("Tags saved").waitFor();
      assert.equal(await page.locator('.image-controls a[href="/?tags=funny"]').count(), 1);
      await page.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("button", { name: "Yes, delete" }).click();
      await page.waitForURL(`${env.url}/`);
      assert.equal(env.read.images.some((i) => i.short_id === id), false);
      assert.deepEqual(unexpected(), []);
    });

    await t.step("a 401 drops the token and goes to the login page", async () => {
      const other = env.read.images[7].short_id;
      await page.evaluate(() => localStorage.setItem("imageboard.token", "stale"));
      await page.goto(`${env.url}/i/${other}`);
      await page.getByRole("button", { name: "Edit tags" }).click();
      await page.getByRole("button", { name: "Save tags" }).click();
      await page.waitForURL(`${env.url}/login?next=/i/${other}`);
      assert.equal(await page.evaluate(() => localStorage.getItem("imageboard.token")), null);
    });

    await t.step("pages hydrate without console errors; the 404 page has no script", async () => {
      await page.close();
      page = await env.context.newPage();
      errors = collectErrors(page);
      for (const path of ["/", "/tags", "/login", `/i/${env.read.images[9].short_id}`]) {
        await page.goto(`${env.url}${path}`);
        await hydrated(page);
      }
      assert.deepEqual(errors, []);
      const res = await page.goto(`${env.url}/no/such/page`);
      assert.equal(res?.status(), 404);
      assert.equal(await page.locator("script").count(), 0);
      await page.getByRole("heading", { name: "Page not found" }).waitFor();
    });
  } finally {
    await env.stop();
  }
});
