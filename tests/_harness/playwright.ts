/** Browser-test helpers: Chromium through playwright-core, and a loopback server. */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "npm:playwright-core@1.65.1";
import sharp from "sharp";
import { browserChoice } from "./browser.ts";

/** Flags for a quiet headless chromium in a container. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The Chromium of this run, or why the browser tests are skipped (their `ignore`) or fail. */
export const BROWSER = browserChoice();

/**
 * How long any one wait of a page may take before the test fails: generous, because the suite runs
 * `--parallel` on two busy cores (a 5 s wait for a suggestion list failed in CI).
 */
export const WAIT_MS = 30_000;

/** The repository's root. */
export const ROOT = new URL("../../", import.meta.url);

/**
 * Builds the islands' assets when no build is there yet (a first `deno task test` on a fresh
 * clone); a build already made is used as it is.
 */
export async function ensureBuiltAssets(): Promise<void> {
  try {
    Deno.statSync(new URL("_build/manifest.json", ROOT));
  } catch {
    await (await import("../../adapters/islands/build.ts")).buildAssets({ writeGen: false });
  }
}

/**
 * Saves what `page` shows as tests/artifacts/`name` (the README's screenshots are copied from
 * there by hand) and checks that it shows something: the viewport's size, and more than a blank
 * page (some colour channel varies by more than `MIN_STDEV` across the picture).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  await Deno.mkdir(new URL("tests/artifacts/", ROOT), { recursive: true });
  const png = await page.screenshot({ path: new URL(`tests/artifacts/${name}`, ROOT).pathname });
  const { width, height } = await sharp(png).metadata();
  const viewport = page.viewportSize();
  assert.deepEqual({ width, height }, viewport, `${name}: the viewport's size`);
  const { channels } = await sharp(png).stats();
  const spread = Math.max(...channels.map((c) => c.stdev));
  assert.ok(spread > MIN_STDEV, `${name}: blank (colour spread ${spread.toFixed(1)})`);
}

/**
 * A blank page's channels vary by 0.0; the emptiest screenshot kept here (similar_upload.png)
 * measured 26.1, the others 33-93 (screenshot()'s check; its test is in docs_test.ts).
 */
export const MIN_STDEV = 5;

/** Launches the run's Chromium; throws the reason when there is none. */
export function launchBrowser(): Promise<Browser> {
  if (!BROWSER.path) throw new Error(BROWSER.reason);
  return chromium.launch({ executablePath: BROWSER.path, args: CHROMIUM_ARGS });
}

/** One console error or uncaught exception of a page; `url` is where the console placed it. */
export interface PageError {
  text: string;
  url: string;
}

/** Console errors, uncaught exceptions and CSP violations of a page, as they happen. */
export function collectErrors(page: Page): PageError[] {
  const errors: PageError[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push({ text: msg.text(), url: msg.location().url });
  });
  page.on("pageerror", (err) => errors.push({ text: `${err.name}: ${err.message}`, url: "" }));
  return errors;
}

/** A server on a random loopback port. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

type Handler = (req: Request, env: { remoteAddr: Deno.NetAddr }) => Response | Promise<Response>;

/**
 * Serves `handler` on 127.0.0.1, port 0, passing the socket address as the app's env (what
 * `getConnInfo` reads, so the login limiter sees a real peer).
 */
export function serve(handler: Handler): TestServer {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => handler(req, { remoteAddr: info.remoteAddr }),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

/**
 * Registers a browser test: a fresh context of `browser()` (signed in with `token` when given,
 * the way the login page stores it), a page with WAIT_MS for every wait, and no console errors
 * allowed at the end.
 */
export function browserTest(
  name: string,
  browser: () => Browser,
  token: string | null,
  fn: (page: Page) => Promise<void>,
  viewport = { width: 1280, height: 900 },
) {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    const context = await browser().newContext({ viewport });
    try {
      if (token) {
        await context.addInitScript((t) => {
          localStorage.setItem("imageboard.token", t);
          localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
        }, token);
      }
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT_MS);
      const errors = collectErrors(page);
      await fn(page);
      assert.deepEqual(errors, [], "console errors");
    } finally {
      await context.close();
    }
  });
}

/**
 * Watches for the element `id` to appear, and tells whether it had the focus at that moment: in
 * the task that inserted it, before any later task (an effect after paint, a timer) could move
 * the focus. Keys a person presses right after opening an editor go where the focus is then.
 * Call before the action that shows the element; await the result after it.
 */
export async function focusedOnArrival(page: Page, id: string): Promise<() => Promise<boolean>> {
  await page.evaluate((id) => {
    const w = window as unknown as { __focusedOnArrival?: Promise<boolean> };
    w.__focusedOnArrival = new Promise((resolve) => {
      new MutationObserver((_, observer) => {
        const el = document.getElementById(id);
        if (!el) return;
        observer.disconnect();
        resolve(document.activeElement === el);
      }).observe(document.body, { childList: true, subtree: true });
    });
  }, id);
  return () =>
    page.evaluate(() =>
      (window as unknown as { __focusedOnArrival: Promise<boolean> }).__focusedOnArrival
    );
}

/**
 * Resolves once the page has loaded and its islands have hydrated (adapters/islands/boot.ts marks
 * `<html>`): islands load by dynamic import after the load event, and a button pressed before
 * its island hydrated does nothing (a CI run waited 30 s for the library's copy fallback so).
 */
export function hydrated(page: Page): Promise<unknown> {
  return page.waitForFunction(() =>
    document.readyState === "complete" &&
    (!document.querySelector("[data-island]") ||
      document.documentElement.hasAttribute("data-hydrated"))
  );
}
