/**
 * The login's cross-site check in Chromium (tests/auth_cross_site_test.ts has the rules): Swagger
 * UI's Authorize, a same-origin form post, signs in; a page of another site that posts the login
 * form is refused and counts nothing, however often it posts.
 */
import assert from "node:assert/strict";
import { startService, TEST_PASSWORD } from "../_harness/app.ts";
import { BROWSER, launchBrowser, serve, WAIT_MS } from "../_harness/playwright.ts";

const svc = await startService({ env: { LOGIN_MAX_FAILURES: "3" } });
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
const TOKEN_PATH = "/api/v1/auth/token";

Deno.test({
  name: "a page of another site that posts the login form is refused, and nothing is counted",
  ignore: BROWSER.skip,
}, async () => {
  // 127.0.0.2 is another site than 127.0.0.1 (an address is its own site).
  const evil = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen: () => {} },
    () =>
      new Response(
        `<form method="post" action="${server.url}${TOKEN_PATH}">
        <input name="username" value="admin"><input name="password" value="guess">
      </form><script>document.forms[0].submit()</script>`,
        { headers: { "content-type": "text/html" } },
      ),
  );
  // The failures counted so far (the file's other tests may have made some): none are added.
  const failures = async () =>
    (await svc.db.sql`select coalesce(sum(failures), 0)::int as n from login_failures`)[0].n;
  const before = await failures();
  const page = await browser!.newPage();
  try {
    for (let i = 0; i < 5; i++) {
      const answer = page.waitForResponse((r) => r.url().endsWith(TOKEN_PATH), {
        timeout: WAIT_MS,
      });
      await page.goto(`http://127.0.0.2:${evil.addr.port}/`);
      const res = await answer;
      assert.equal(res.status(), 403, `post ${i + 1}`);
      assert.equal((await res.json()).code, "cross_site_login");
    }
    assert.equal(await failures(), before, "no failure counted");
  } finally {
    await page.close();
    await evil.shutdown();
  }
});

Deno.test({
  name: "Swagger UI's Authorize (a same-origin form post) signs in",
  ignore: BROWSER.skip,
}, async () => {
  const page = await browser!.newPage();
  page.setDefaultTimeout(WAIT_MS);
  try {
    await page.goto(`${server.url}/docs`);
    await page.locator("button.authorize").first().click();
    await page.locator("#oauth_username").fill("admin");
    await page.locator("#oauth_password").fill(TEST_PASSWORD);
    const answer = page.waitForResponse((r) => r.url().endsWith(TOKEN_PATH));
    await page.locator(".auth-btn-wrapper button.authorize").first().click();
    const res = await answer;
    assert.equal(res.status(), 200);
    const sent = await res.request().allHeaders();
    assert.equal(sent["content-type"], "application/x-www-form-urlencoded");
    assert.equal(sent["origin"], server.url, "the browser named the board's own origin");
    assert.equal((await res.json()).token_type, "bearer");
  } finally {
    await page.close();
  }
});
