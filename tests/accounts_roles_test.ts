/**
 * Who may call which route (issue 42), table-driven: every route of api/permissions.ts's
 * ROUTE_RULES against each kind of caller, with the answer written out here, and a walk over the
 * registered routes that fails when a write route has no rule.
 */
import assert from "node:assert/strict";
import { ROUTE_RULES } from "../api/permissions.ts";
import { startService } from "./_harness/app.ts";
import { call, MEMBER_PASSWORD, newKey, newMember, signIn } from "./_harness/accounts.ts";
import { makeImage, randomTag, upload } from "./_harness/images.ts";
import { apiRoutes } from "./_harness/routes.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());

const READS = new Set(["GET", "HEAD"]);

Deno.test("every write route of the API has a rule, and every rule names a registered route", () => {
  const routes = apiRoutes(svc.services);
  const keys = new Set(routes.map((r) => r.key));
  const missing = routes.filter((r) => !READS.has(r.method) && !(r.key in ROUTE_RULES));
  assert.deepEqual(missing.map((r) => r.key), [], "write routes without a rule");
  const stale = Object.keys(ROUTE_RULES).filter((k) => !keys.has(k));
  assert.deepEqual(stale, [], "rules of no registered route");
});

/** The callers: sessions, and keys of the member (and one of the admin) with these scopes. */
type Caller =
  | "admin"
  | "member"
  | "stranger"
  | "keyAll"
  | "keyUpload"
  | "keyEdit"
  | "keyDelete"
  | "adminKey";
const CALLERS: Caller[] = [
  "admin",
  "member",
  "stranger",
  "keyAll",
  "keyUpload",
  "keyEdit",
  "keyDelete",
  "adminKey",
];

/** "ok": past the check (any answer but 401 and 403); 403: refused `forbidden`. */
type Answer = "ok" | 403;
const row = (...answers: Answer[]) =>
  Object.fromEntries(CALLERS.map((c, i) => [c, answers[i]])) as Record<Caller, Answer>;
const SESSION_ONLY = row("ok", "ok", "ok", 403, 403, 403, 403, 403);
const ADMIN_SESSION = row("ok", 403, 403, 403, 403, 403, 403, 403);
const ADMIN_EDIT = row("ok", 403, 403, 403, 403, 403, 403, "ok");
const ANY = row("ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok");
const EDIT = row("ok", "ok", "ok", "ok", 403, "ok", 403, "ok");
const OWN_DELETE = row("ok", "ok", 403, "ok", 403, 403, "ok", "ok");

/**
 * The expected answer of each caller on each guarded route. `stranger` is a member acting on an
 * image another member uploaded (on routes without an image, a member like any other).
 */
const EXPECTED: Record<string, Record<Caller, Answer>> = {
  "POST /images": row("ok", "ok", "ok", "ok", "ok", 403, 403, "ok"),
  "PATCH /images/:id/tags": EDIT,
  "PATCH /images/:id": EDIT,
  "DELETE /images/:id": OWN_DELETE,
  "POST /images/:id/merge-into/:other": OWN_DELETE,
  // Before sign-out-everywhere below, which ends the member token that uploads its image.
  "POST /images/:id/sends": ANY,
  "PUT /tag-aliases/:alias": ADMIN_EDIT,
  "DELETE /tag-aliases/:alias": ADMIN_EDIT,
  "PUT /tag-implications/:tag": ADMIN_EDIT,
  "DELETE /tag-implications/:tag": ADMIN_EDIT,
  "PATCH /tags/:name": ADMIN_EDIT,
  "GET /me": ANY,
  "PATCH /me/password": SESSION_ONLY,
  "POST /me/sign-out-everywhere": SESSION_ONLY,
  "GET /me/api-keys": SESSION_ONLY,
  "POST /me/api-keys": SESSION_ONLY,
  "DELETE /me/api-keys/:id": SESSION_ONLY,
  "GET /me/favorites": ANY,
  "PUT /me/favorites/:id": EDIT,
  "DELETE /me/favorites/:id": EDIT,
  "GET /users": ADMIN_SESSION,
  "PATCH /users/:username": ADMIN_SESSION,
  "GET /invites": ADMIN_SESSION,
  "POST /invites": ADMIN_SESSION,
  "DELETE /invites/:code": ADMIN_SESSION,
  "GET /audit": ADMIN_SESSION,
};

Deno.test("each caller against each guarded route: past the check, or 403 forbidden", async () => {
  const guarded = Object.entries(ROUTE_RULES).filter(([, r]) => !("public" in r)).map(([k]) => k);
  assert.deepEqual(guarded.sort(), Object.keys(EXPECTED).sort(), "a row here for every rule");
  const adminName = "admin";
  const adminToken = await signIn(svc);
  const member = await newMember(svc, adminToken, "roles_member");
  const other = await newMember(svc, adminToken, "roles_other");
  const keys = {
    keyAll: (await newKey(svc, member.token, ["upload", "edit", "delete"])).key,
    keyUpload: (await newKey(svc, member.token, ["upload"])).key,
    keyEdit: (await newKey(svc, member.token, ["edit"])).key,
    keyDelete: (await newKey(svc, member.token, ["delete"])).key,
    adminKey: (await newKey(svc, adminToken, ["upload", "edit", "delete"])).key,
  };
  const imageOf = async (token: string) => {
    const res = await upload(svc.app, { authorization: `Bearer ${token}` }, await makeImage());
    assert.equal(res.status, 201);
    return (await res.json()).short_id as string;
  };
  const checked: string[] = [];
  for (const [key, answers] of Object.entries(EXPECTED)) {
    const [method, path] = key.split(" ");
    for (const caller of CALLERS) {
      // A fresh session each time: sign-out-everywhere ends the caller's earlier tokens.
      const bearer = caller === "admin"
        ? await signIn(svc, adminName)
        : caller === "member" || caller === "stranger"
        ? await signIn(svc, member.username, MEMBER_PASSWORD)
        : keys[caller];
      // The member's own image, or (for the stranger) the other member's.
      const image = path.includes(":id") && path.startsWith("/images")
        ? await imageOf(caller === "stranger" ? other.token : member.token)
        : "AbCdEfGh";
      const url = path
        .replace(":id", path.startsWith("/me/api-keys") ? "999999" : image)
        .replace(":other", "AbCdEfGh")
        .replace(/:(alias|tag|name)/, randomTag())
        .replace(":username", "roles_other")
        .replace(":code", "no-such-code");
      const res = method === "POST" && path === "/images"
        ? await upload(svc.app, { authorization: `Bearer ${bearer}` }, await makeImage())
        : await call(svc, method, url, bearer, method === "GET" ? undefined : {});
      const body = await res.text();
      const what = `${key} as ${caller}: ${res.status} ${body}`;
      assert.notEqual(res.status, 401, what);
      if (answers[caller] === 403) {
        assert.equal(res.status, 403, what);
        assert.equal(JSON.parse(body).code, "forbidden", what);
      } else {
        assert.notEqual(res.status, 403, what);
      }
      checked.push(`${key} ${caller}`);
    }
  }
  assert.equal(checked.length, Object.keys(EXPECTED).length * CALLERS.length);
});

Deno.test("a member deletes and merges away its own uploads only; an admin any", async () => {
  const adminToken = await signIn(svc);
  const a = await newMember(svc, adminToken);
  const b = await newMember(svc, adminToken);
  const up = async (token: string) =>
    (await (await upload(svc.app, { authorization: `Bearer ${token}` }, await makeImage()))
      .json()).short_id as string;
  const theirs = await up(b.token);
  const mine = await up(a.token);
  const refused = await call(svc, "DELETE", `/images/${theirs}`, a.token);
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).code, "forbidden");
  assert.equal(
    (await call(svc, "POST", `/images/${theirs}/merge-into/${mine}`, a.token)).status,
    403,
  );
  // Merging its own into another's is allowed: the one that goes away is its own.
  assert.equal(
    (await call(svc, "POST", `/images/${mine}/merge-into/${theirs}`, a.token)).status,
    200,
  );
  assert.equal((await call(svc, "DELETE", `/images/${theirs}`, adminToken)).status, 204);
  // An image from before accounts (no uploader) is an admin's to delete.
  const old = await up(adminToken);
  await svc.db.sql`update images set uploaded_by = null where short_id = ${old}`;
  assert.equal((await call(svc, "DELETE", `/images/${old}`, a.token)).status, 403);
  assert.equal((await call(svc, "DELETE", `/images/${old}`, adminToken)).status, 204);
});
