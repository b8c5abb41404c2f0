/**
 * `POST /api/v1/auth/token` refuses a sign-in sent by another site's page (403
 * `cross_site_login`) before anything is read or counted, so no web page can lock its visitors'
 * address; same-origin pages (the login page, Swagger UI's Authorize) and clients that send
 * neither `Sec-Fetch-Site` nor `Origin` keep working.
 */
import assert from "node:assert/strict";
import { isCrossSite } from "../adapters/http/mod.ts";
import { type TestService, withService } from "./_harness/app.ts";
import { fail, login, peer } from "./_harness/login.ts";

const EVIL = "https://evil.example";
/** What Chromium sends with an auto-submitting form on another site. */
const CROSS_SITE = { "sec-fetch-site": "cross-site", origin: EVIL };
/** What Chromium sends with Swagger UI's Authorize, served by the board itself. */
const SAME_ORIGIN = { "sec-fetch-site": "same-origin", origin: "http://localhost" };

async function assertCrossSite(res: Response) {
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), {
    code: "cross_site_login",
    detail: "Sign-in requests from other sites are refused; sign in on the board's own pages",
  });
}

async function failureRows(svc: TestService): Promise<number> {
  const [row] = await svc.db.sql`select count(*)::int as n from login_failures`;
  return row.n;
}

Deno.test("ten cross-site form logins are refused uncounted; a same-site login then succeeds", async () => {
  await withService({ LOGIN_MAX_FAILURES: "5" }, async (svc) => {
    for (let i = 0; i < 10; i++) {
      await assertCrossSite(await login(svc.app, { encoding: "form", headers: CROSS_SITE }));
    }
    // Sec-Fetch-Site alone (an Origin-less navigation) and Origin alone (no Fetch Metadata).
    await assertCrossSite(
      await login(svc.app, { encoding: "form", headers: { "sec-fetch-site": "cross-site" } }),
    );
    for (const origin of [EVIL, "null", "http://localhost.evil.example", "https://localhost"]) {
      await assertCrossSite(await login(svc.app, { encoding: "form", headers: { origin } }));
    }
    assert.equal(await failureRows(svc), 0, "no failure counted");
    const res = await login(svc.app, { encoding: "form", headers: SAME_ORIGIN });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).token_type, "bearer");
  });
});

Deno.test("clients without Sec-Fetch-Site or Origin, and same-origin pages, sign in and are counted", async () => {
  await withService({}, async (svc) => {
    for (const encoding of ["json", "form", "multipart"] as const) {
      const res = await login(svc.app, { encoding });
      assert.equal(res.status, 200, encoding);
      await res.body?.cancel();
    }
    // Swagger UI's Authorize: a same-origin form post; the login page: a same-origin JSON post.
    for (const encoding of ["form", "json"] as const) {
      const res = await login(svc.app, { encoding, headers: SAME_ORIGIN });
      assert.equal(res.status, 200, encoding);
      await res.body?.cancel();
    }
    // An older browser sends Origin without Sec-Fetch-Site.
    const own = await login(svc.app, { headers: { origin: "http://localhost" } });
    assert.equal(own.status, 200);
    await own.body?.cancel();
    // A wrong password from the board's own page is an ordinary, counted failure.
    assert.equal(await fail(svc.app, { encoding: "form", headers: SAME_ORIGIN }), 401);
    assert.equal(await failureRows(svc), 1);
  });
});

Deno.test("with PUBLIC_BASE_URL, the board's origin is that one, not the request's", async () => {
  await withService({ PUBLIC_BASE_URL: "https://board.example" }, async (svc) => {
    const ok = await login(svc.app, {
      encoding: "form",
      headers: { origin: "https://board.example" },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    await assertCrossSite(
      await login(svc.app, { encoding: "form", headers: { origin: "http://localhost" } }),
    );
  });
});

Deno.test("the board's own origin behind a trusted proxy follows X-Forwarded-Proto", async () => {
  await withService({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.1" }, async (svc) => {
    const post = (ip: string) =>
      svc.app.request("/api/v1/auth/token", {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: "https://localhost",
          "x-forwarded-proto": "https",
        },
        body: "username=admin&password=nope",
      }, peer(ip));
    assert.equal((await post("10.0.0.1")).status, 401, "the proxy's https is the board's origin");
    await assertCrossSite(await post("203.0.113.5")); // anyone else's header is not believed
  });
});

Deno.test("isCrossSite() reads Sec-Fetch-Site first, then Origin", () => {
  const own = "https://board.example";
  const h = (o: Record<string, string>) => new Headers(o);
  assert.equal(isCrossSite(h({}), own), false);
  assert.equal(isCrossSite(h({ "sec-fetch-site": "cross-site", origin: own }), own), true);
  assert.equal(isCrossSite(h({ "sec-fetch-site": "same-origin", origin: EVIL }), own), false);
  assert.equal(isCrossSite(h({ "sec-fetch-site": "same-site", origin: EVIL }), own), true);
  assert.equal(isCrossSite(h({ "sec-fetch-site": "same-site", origin: own }), own), false);
  assert.equal(isCrossSite(h({ "sec-fetch-site": "none" }), own), false);
  assert.equal(isCrossSite(h({ origin: "HTTPS://Board.Example" }), own), false);
  assert.equal(isCrossSite(h({ origin: "null" }), own), true);
});
