/** `POST /api/v1/auth/token`: sign-in with JSON and form fields, 401/422, logs and docs. */
import assert from "node:assert/strict";
import { verifyAccessToken } from "../services/auth.ts";
import { TEST_PASSWORD, TEST_SECRET, withService } from "./_harness/app.ts";
import { fail, login, WRONG_PASSWORD } from "./_harness/login.ts";

async function assertToken(res: Response, ttl: number) {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), ["access_token", "expires_in", "token_type"]);
  assert.equal(body.token_type, "bearer");
  assert.equal(body.expires_in, ttl);
  assert.equal(await verifyAccessToken({ JWT_SECRET: TEST_SECRET }, body.access_token), "admin");
}

Deno.test("POST /auth/token with JSON answers 200 with a bearer token", async () => {
  await withService({ ACCESS_TOKEN_TTL_SECONDS: "120" }, async (svc) => {
    await assertToken(await login(svc.app), 120);
    const charset = await login(svc.app, {
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    await assertToken(charset, 120);
  });
});

Deno.test("POST /auth/token accepts form fields (OAuth2 password flow) and multipart", async () => {
  await withService({}, async (svc) => {
    await assertToken(await login(svc.app, { encoding: "form" }), 43_200);
    await assertToken(await login(svc.app, { encoding: "multipart" }), 43_200);
  });
});

Deno.test("POST /auth/token answers 401 with WWW-Authenticate for wrong credentials", async () => {
  await withService({}, async (svc) => {
    for (
      const opts of [
        { password: WRONG_PASSWORD },
        { username: "root" },
        { username: "admin ", encoding: "form" as const },
        { password: TEST_PASSWORD.toUpperCase(), ip: "203.0.113.8" },
      ]
    ) {
      const res = await login(svc.app, opts);
      assert.equal(res.status, 401, JSON.stringify(opts));
      assert.equal(res.headers.get("www-authenticate"), "Bearer");
      assert.deepEqual(await res.json(), { detail: "Incorrect username or password" });
    }
  });
});

Deno.test("POST /auth/token answers 422 for missing or malformed fields", async () => {
  await withService({}, async (svc) => {
    const post = (body: BodyInit | null, type?: string) =>
      svc.app.request("/api/v1/auth/token", {
        method: "POST",
        headers: type ? { "content-type": type } : {},
        body,
      });
    const cases: [BodyInit | null, string | undefined, RegExp][] = [
      [JSON.stringify({ username: "admin" }), "application/json", /password: is required/],
      [JSON.stringify({ password: "x" }), "application/json", /username: is required/],
      [JSON.stringify({}), "application/json", /username: is required; password: is required/],
      [JSON.stringify({ username: 1, password: "x" }), "application/json", /username: must be/],
      [JSON.stringify({ username: "", password: "x" }), "application/json", /must not be empty/],
      [JSON.stringify(["admin", "pw"]), "application/json", /./],
      [JSON.stringify(null), "application/json", /./],
      ["{not json at all", "application/json", /not valid JSON/],
      ["", "application/json", /not valid JSON/],
      ["username=admin", "application/x-www-form-urlencoded", /password: is required/],
      ["username=admin&password=a&password=b", "application/x-www-form-urlencoded", /password/],
      ["garbage", "text/plain", /JSON or as form fields/],
      [null, undefined, /JSON or as form fields/],
    ];
    for (const [body, type, detail] of cases) {
      const res = await post(body, type);
      assert.equal(res.status, 422, `${type} ${body}`);
      const json = await res.json();
      assert.match(json.detail, detail, `${type} ${body}`);
    }
    // None of them counted as a failed sign-in.
    const [{ n }] = await svc.db.sql`select count(*)::int as n from login_failures`;
    assert.equal(n, 0);
  });
});

Deno.test("POST /auth/token refuses a body over 64 KiB with 413, and a long password with 422", async () => {
  await withService({}, async (svc) => {
    const res = await login(svc.app, { password: "x".repeat(70_000) });
    assert.equal(res.status, 413);
    assert.equal((await res.json()).code, "body_too_large");
    const long = await login(svc.app, { password: "x".repeat(20_000) });
    assert.equal(long.status, 422);
    assert.match((await long.json()).detail, /password: is too long/);
    const [{ n }] = await svc.db.sql`select count(*)::int as n from login_failures`;
    assert.equal(n, 0, "neither counted as a failed sign-in");
  });
});

Deno.test("passwords never appear in the logs", async () => {
  await withService({ LOG_LEVEL: "debug" }, async (svc) => {
    assert.equal(await fail(svc.app), 401);
    assert.equal(await fail(svc.app, { encoding: "form" }), 401);
    assert.equal((await login(svc.app, { encoding: "form" })).status, 200);
    const res = await login(svc.app);
    assert.equal(res.status, 200);
    const { access_token } = await res.json();
    const logs = svc.logs.join("\n");
    assert.match(logs, /login failed/, "the test saw the log lines");
    assert.match(logs, /login succeeded/);
    for (const secret of [TEST_PASSWORD, WRONG_PASSWORD, access_token, TEST_SECRET]) {
      assert.equal(logs.includes(secret), false, `${secret} appears in the logs`);
    }
  });
});

Deno.test("the OpenAPI document has the login route and the bearer scheme", async () => {
  await withService({}, async (svc) => {
    const doc = await (await svc.app.request("/openapi.json")).json();
    const op = doc.paths["/auth/token"]?.post;
    assert.ok(op, "POST /auth/token is documented");
    assert.deepEqual(Object.keys(op.requestBody.content).sort(), [
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
    ]);
    for (const status of ["200", "401", "422", "429"]) assert.ok(op.responses[status], status);
    assert.ok(op.responses["429"].headers["Retry-After"]);
    assert.deepEqual(doc.components.schemas.LoginRequest.required.sort(), ["password", "username"]);
    const bearer = doc.components.securitySchemes.bearer;
    assert.equal(bearer.type, "oauth2");
    assert.equal(bearer.flows.password.tokenUrl, "/api/v1/auth/token");
  });
});
