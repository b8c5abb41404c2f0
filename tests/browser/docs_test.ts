/**
 * /docs (Swagger UI) and /redoc (ReDoc) in Chromium under the policies they are served with: both
 * render the whole API, nothing they need is blocked, and neither can be framed (the page where a
 * token is pasted must not be clickjacked).
 */
import assert from "node:assert/strict";
import { startService } from "../_harness/app.ts";
import {
  BROWSER,
  collectErrors,
  launchBrowser,
  MIN_STDEV,
  screenshot,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";

const svc = await startService();
const server = serve(svc.app.fetch);
const browser = BROWSER.skip ? null : await launchBrowser();
Deno.test.afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server.close();
    await svc.close();
  }
});

/** A blocked load that is expected: ReDoc's footer logo lives on its vendor's CDN. */
const EXPECTED = /cdn\.redoc\.ly/;

for (
  const [path, ready] of [
    ["/docs", ".opblock"], // one block per operation
    ["/redoc", "[data-section-id^='tag/'], [data-section-id^='operation/']"],
  ] as const
) {
  Deno.test({
    name: `${path} renders under its Content-Security-Policy and cannot be framed`,
    ignore: BROWSER.skip,
  }, async () => {
    const res = await fetch(`${server.url}${path}`);
    await res.body?.cancel();
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const part of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"]) {
      assert.ok(csp.includes(part), `${path}: ${part} in ${csp}`);
    }
    assert.ok(!/script-src[^;]*unsafe/.test(csp), `${path}: no unsafe script source`);
    assert.equal(res.headers.get("x-frame-options"), "DENY");

    const page = await browser!.newPage();
    try {
      const errors = collectErrors(page);
      await page.goto(`${server.url}${path}`);
      await page.waitForSelector(ready, { timeout: 30_000 });
      const count = await page.locator(ready).count();
      assert.ok(count >= 5, `${path}: ${count} sections rendered`);
      const blocked = errors.filter((e) => !EXPECTED.test(e.text) && !/favicon/.test(e.url));
      assert.deepEqual(blocked, [], `${path}: console errors`);

      // Framed from another origin (127.0.0.2 is another origin than 127.0.0.1): refused.
      const framer = Deno.serve(
        { hostname: "127.0.0.2", port: 0, onListen: () => {} },
        () =>
          new Response(`<iframe src="${server.url}${path}"></iframe>`, {
            headers: { "content-type": "text/html" },
          }),
      );
      try {
        // Refused, not merely slow: the frame's load fails as blocked by the response (an
        // unloaded frame has no such failure), Chromium says why on the console, and the frame
        // holds its error page, not the document.
        const failed = page.waitForEvent("requestfailed", {
          predicate: (r) => r.url() === `${server.url}${path}`,
          timeout: WAIT_MS,
        });
        const told = page.waitForEvent("console", {
          predicate: (m) => /^Framing '.+' violates .+"frame-ancestors 'none'"/.test(m.text()),
          timeout: WAIT_MS,
        });
        await page.goto(`http://127.0.0.2:${framer.addr.port}/`);
        assert.equal((await failed).failure()?.errorText, "net::ERR_BLOCKED_BY_RESPONSE");
        await told;
        const frame = page.frames().find((f) => f !== page.mainFrame());
        assert.ok(frame, "the framer's iframe exists");
        await frame.waitForURL("chrome-error://chromewebdata/", { timeout: WAIT_MS });
        const content = await frame.content().catch(() => "");
        assert.ok(!content.includes("swagger-ui") && !content.includes("<redoc"), "not framed");
      } finally {
        await framer.shutdown();
      }
    } finally {
      await page.close();
    }
  });
}

Deno.test({
  name: "screenshot() keeps a page that shows something and refuses a blank one",
  ignore: BROWSER.skip,
}, async () => {
  const page = await browser!.newPage();
  try {
    await page.goto(`${server.url}/docs`);
    await page.waitForSelector(".opblock", { timeout: WAIT_MS });
    await screenshot(page, "docs.png");
    await page.setContent("<html><body style='background:#fff'></body></html>");
    await assert.rejects(screenshot(page, "blank.png"), /blank \(colour spread 0\.0\)/);
    assert.ok(MIN_STDEV > 0);
  } finally {
    await page.close();
  }
});
