/**
 * The require-auth check: forged tokens are refused on a protected test route, and a walk over
 * every route registered on the API app proves that each write route refuses a request without
 * a valid bearer token, so a future route cannot forget it.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { AppEnv } from "../api/env.ts";
import { onError } from "../api/errors.ts";
import { ROUTE_RULES } from "../api/permissions.ts";
import { requireAuth } from "../api/require_auth.ts";
import { verifyAccessToken } from "../services/auth.ts";
import { startService, TEST_SECRET, type TestService } from "./_harness/app.ts";
import { login } from "./_harness/login.ts";
import { apiRoutes } from "./_harness/routes.ts";
import { tokens } from "./_harness/tokens.ts";

const READ_METHODS = new Set(["GET", "HEAD"]);
/** The POST routes anyone may call: sign-in, accepting an invite, searching by an image. */
const PUBLIC_WRITES = new Set(
  Object.entries(ROUTE_RULES).filter(([, rule]) => "public" in rule).map(([key]) => key),
);
/**
 * Every write route, and what it answers an authorised `send()` (a JSON body of `{}`, an unknown
 * image ID): the request got past the token check and was refused for what it carries. A new
 * write route must be added here with the answer it gives.
 */
const ACCEPTED_ANSWERS: Record<string, number> = {
  "DELETE /images/:id": 404, // no such image
  "PATCH /images/:id/tags": 404, // no such image
  "POST /images": 400, // not a multipart body
  "POST /images/:id/merge-into/:other": 422, // the walk fills both IDs alike: a self-merge
  "PUT /tag-aliases/:alias": 422, // no target
  "DELETE /tag-aliases/:alias": 404, // no such alias
  "PUT /tag-implications/:tag": 422, // no implies list
  "DELETE /tag-implications/:tag": 404, // the tag implies nothing
  "PATCH /tags/:name": 422, // no new name
  "PATCH /images/:id": 422, // no text
  "PATCH /me/password": 422, // no passwords
  "POST /me/sign-out-everywhere": 204, // done (the next route gets a new token)
  "POST /me/api-keys": 422, // no name
  "DELETE /me/api-keys/:id": 404, // no such key
  "PUT /me/favorites/:id": 404, // no such image
  "DELETE /me/favorites/:id": 404, // no such image
  "POST /images/:id/sends": 404, // no such image
  "PATCH /users/:username": 404, // no such account
  "POST /invites": 201, // a member's invite, the defaults
  "DELETE /invites/:code": 404, // no such invite
};

function protectedApp() {
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.post(
    "/write",
    // Tokens alone: the accounts behind them are tested through the real routes below.
    requireAuth({
      authenticate: async (bearer) => {
        const sub = await verifyAccessToken({ JWT_SECRET: TEST_SECRET }, bearer);
        return sub ? { userId: "1", username: sub, role: "admin", key: null } : null;
      },
    }),
    (c) => c.json({ user: c.get("user") }),
  );
  return app;
}

async function assert401(res: Response, detail: string, what: string) {
  assert.equal(res.status, 401, what);
  assert.equal(res.headers.get("www-authenticate"), "Bearer", what);
  assert.deepEqual(await res.json(), { detail }, what);
}

Deno.test("requireAuth() accepts a valid token and sets the user", async () => {
  const app = protectedApp();
  const { valid } = await tokens(TEST_SECRET);
  for (const scheme of ["Bearer", "bearer"]) {
    const res = await app.request("/write", {
      method: "POST",
      headers: { authorization: `${scheme} ${valid}` },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { user: "admin" });
  }
});

Deno.test("requireAuth() answers 401 'Not authenticated' without a bearer token", async () => {
  const app = protectedApp();
  const { valid } = await tokens(TEST_SECRET);
  for (const header of [undefined, "", "Bearer", "Bearer ", `Basic ${valid}`, `Token ${valid}`]) {
    const headers: Record<string, string> = header === undefined ? {} : { authorization: header };
    const res = await app.request("/write", { method: "POST", headers });
    await assert401(res, "Not authenticated", String(header));
  }
});

Deno.test("requireAuth() refuses tampered, unsigned, HS512, foreign, expired and sub-less tokens", async () => {
  const app = protectedApp();
  const { refused } = await tokens(TEST_SECRET);
  for (const [name, token] of Object.entries(refused)) {
    const res = await app.request("/write", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    await assert401(res, "Invalid or expired token", name);
  }
});

function writeRoutes(svc: TestService) {
  const all = apiRoutes(svc.services);
  assert.ok(all.length > 0, "the walk found no routes at all");
  assert.ok(all.some((r) => r.key === "POST /auth/token"), "the walk sees the login route");
  // Exactly these are open to anyone; a write marked public by mistake fails here.
  assert.deepEqual([...PUBLIC_WRITES].sort(), [
    "POST /auth/token",
    "POST /chat/discord",
    "POST /chat/slack",
    "POST /chat/slack/actions",
    "POST /chat/telegram",
    "POST /images/search-by-image",
    "POST /invites/:code/accept",
  ]);
  const writes = all.filter((r) => !READ_METHODS.has(r.method) && !PUBLIC_WRITES.has(r.key));
  // Upload, delete and tag update are write operations: the walk must find each of them.
  const keys = writes.map((r) => r.key);
  for (const expected of Object.keys(ACCEPTED_ANSWERS)) {
    assert.ok(keys.includes(expected), expected);
  }
  return writes;
}

function send(svc: TestService, route: { method: string; url: string }, token?: string) {
  return svc.app.request(route.url, {
    method: route.method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: "{}",
  });
}

Deno.test("every write route of the API answers 401 without a valid token", async () => {
  const svc = await startService();
  try {
    const { refused } = await tokens(TEST_SECRET);
    const writes = writeRoutes(svc);
    for (const route of writes) {
      await assert401(await send(svc, route), "Not authenticated", route.key);
      for (const [name, token] of Object.entries(refused)) {
        await assert401(
          await send(svc, route, token),
          "Invalid or expired token",
          `${route.key} ${name}`,
        );
      }
    }
    console.log(`checked ${writes.length} write route(s): ${writes.map((r) => r.key).join(", ")}`);
  } finally {
    await svc.close();
  }
});

Deno.test("a token from POST /auth/token is accepted by every write route", async () => {
  const svc = await startService();
  try {
    for (const route of writeRoutes(svc)) {
      // A token per route: sign-out-everywhere ends the ones before it.
      const res = await login(svc.app);
      assert.equal(res.status, 200);
      const { access_token } = await res.json();
      const answer = await send(svc, route, access_token);
      const body = await answer.text();
      assert.ok(route.key in ACCEPTED_ANSWERS, `${route.key}: add its answer to ACCEPTED_ANSWERS`);
      assert.equal(answer.status, ACCEPTED_ANSWERS[route.key], `${route.key}: ${body}`);
    }
  } finally {
    await svc.close();
  }
});
