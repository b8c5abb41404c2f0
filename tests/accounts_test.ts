/**
 * Accounts through the API with real PostgreSQL (issue 42): invites, sign-in, `/me`, passwords,
 * sign-out-everywhere, disabled accounts, the user list and API keys, and what is stored.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startService, TEST_PASSWORD, TEST_SECRET } from "./_harness/app.ts";
import {
  call,
  expect,
  invite,
  MEMBER_PASSWORD,
  newKey,
  newMember,
  signIn,
} from "./_harness/accounts.ts";
import { makeImage, upload } from "./_harness/images.ts";
import { tokens } from "./_harness/tokens.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const admin = await signIn(svc);

Deno.test("an invite answers 201 with its code, link, role and expiry, and is listed while open", async () => {
  const before = Date.now();
  const body = await expect(201, call(svc, "POST", "/invites", admin, {}));
  assert.deepEqual(Object.keys(body).sort(), ["code", "expires_at", "role", "url"]);
  assert.equal(body.role, "member");
  assert.match(body.code, /^[A-Za-z0-9_-]{24}$/);
  assert.equal(body.url, `http://localhost/invite/${body.code}`);
  const hours = (Date.parse(body.expires_at) - before) / 3_600_000;
  assert.ok(hours > 167.9 && hours < 168.1, String(hours));
  const listed = await expect(200, call(svc, "GET", "/invites", admin));
  assert.ok(listed.some((i: { code: string }) => i.code === body.code));
  const admins = await expect(
    201,
    call(svc, "POST", "/invites", admin, { role: "admin", expires_in_hours: 2 }),
  );
  assert.equal(admins.role, "admin");
  await expect(422, call(svc, "POST", "/invites", admin, { role: "owner" }));
});

Deno.test("accepting an invite makes the account and signs it in; /me names it", async () => {
  const code = await invite(svc, admin);
  const res = await expect(
    201,
    call(svc, "POST", `/invites/${code}/accept`, null, {
      username: "Alice",
      password: MEMBER_PASSWORD,
    }),
  );
  assert.equal(res.token_type, "bearer");
  const me = await expect(200, call(svc, "GET", "/me", res.access_token));
  assert.deepEqual(Object.keys(me).sort(), ["created_at", "role", "username"]);
  assert.equal(me.username, "alice"); // names are kept lower-case
  assert.equal(me.role, "member");
  // The invite is used now: not listed, and a second acceptance is 410.
  const listed = await expect(200, call(svc, "GET", "/invites", admin));
  assert.ok(!listed.some((i: { code: string }) => i.code === code));
  const again = await expect(
    410,
    call(svc, "POST", `/invites/${code}/accept`, null, {
      username: "bob_1",
      password: MEMBER_PASSWORD,
    }),
  );
  assert.equal(again.code, "invite_used");
  // Sign-in with the chosen password, in any case of the name.
  await signIn(svc, "ALICE", MEMBER_PASSWORD);
});

Deno.test("an invite past its expiry answers 410 invite_expired; an unknown or withdrawn one 404", async () => {
  const code = await invite(svc, admin);
  await svc.db
    .sql`update invites set expires_at = now() - interval '1 second' where code = ${code}`;
  const expired = await expect(
    410,
    call(svc, "POST", `/invites/${code}/accept`, null, {
      username: "late_one",
      password: MEMBER_PASSWORD,
    }),
  );
  assert.equal(expired.code, "invite_expired");
  await expect(
    404,
    call(svc, "POST", "/invites/nosuchcode/accept", null, {
      username: "x_y_z",
      password: MEMBER_PASSWORD,
    }),
  );
  const withdrawn = await invite(svc, admin);
  await expect(204, call(svc, "DELETE", `/invites/${withdrawn}`, admin));
  await expect(404, call(svc, "DELETE", `/invites/${withdrawn}`, admin));
  await expect(
    404,
    call(svc, "POST", `/invites/${withdrawn}/accept`, null, {
      username: "w_1",
      password: MEMBER_PASSWORD,
    }),
  );
  // None of them made an account.
  const [{ n }] = await svc.db.sql`
    select count(*)::int as n from users where username in ('late_one', 'x_y_z', 'w_1')`;
  assert.equal(n, 0);
});

Deno.test("acceptance refuses a taken or reserved name (409), a bad name or a short password (422)", async () => {
  await newMember(svc, admin, "carol");
  const code = await invite(svc, admin);
  const accept = (username: string, password = MEMBER_PASSWORD) =>
    call(svc, "POST", `/invites/${code}/accept`, null, { username, password });
  assert.equal((await expect(409, accept("CAROL"))).code, "username_taken");
  assert.equal((await expect(409, accept("Admin"))).code, "username_taken");
  for (const bad of ["ab", "a".repeat(33), "bad name", "émile", "a/b"]) {
    assert.equal((await expect(422, accept(bad))).code, "invalid_username", bad);
  }
  assert.equal((await expect(422, accept("dave", "123456789"))).code, "weak_password");
  // The invite is still good after the refusals.
  await expect(201, accept("dave", "1234567890"));
});

Deno.test("a password is stored as a scrypt hash, never as itself", async () => {
  await newMember(svc, admin, "erin");
  const [row] = await svc.db.sql`select password_hash from users where username = 'erin'`;
  assert.match(row.password_hash, /^scrypt\$\d+\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
  const dump = JSON.stringify(await svc.db.sql`select * from users`);
  assert.ok(!dump.includes(MEMBER_PASSWORD));
  assert.ok(!dump.includes(TEST_PASSWORD));
  // The configured admin has a row without a hash: its password is the configuration's.
  const [adminRow] = await svc.db
    .sql`select role, password_hash from users where username = 'admin'`;
  assert.deepEqual({ ...adminRow }, { role: "admin", password_hash: null });
});

Deno.test("PATCH /me/password: 422 wrong_password or weak_password, else 204 and the new one works", async () => {
  const m = await newMember(svc, admin);
  const change = (current_password: string, new_password: string) =>
    call(svc, "PATCH", "/me/password", m.token, { current_password, new_password });
  assert.equal(
    (await expect(422, change("not it at all", "a new password"))).code,
    "wrong_password",
  );
  assert.equal((await expect(422, change(MEMBER_PASSWORD, "short"))).code, "weak_password");
  await expect(204, change(MEMBER_PASSWORD, "a new password"));
  await expect(
    401,
    call(svc, "POST", "/auth/token", null, { username: m.username, password: MEMBER_PASSWORD }),
  );
  await signIn(svc, m.username, "a new password");
  // The configured admin's password is the configuration's.
  const refused = await expect(
    422,
    call(svc, "PATCH", "/me/password", admin, {
      current_password: TEST_PASSWORD,
      new_password: "another long one",
    }),
  );
  assert.equal(refused.code, "configured_admin");
});

Deno.test("sign-out-everywhere: every earlier token answers 401 on its next request; new ones work", async () => {
  const m = await newMember(svc, admin);
  const second = await signIn(svc, m.username, MEMBER_PASSWORD);
  await expect(200, call(svc, "GET", "/me", second));
  await expect(204, call(svc, "POST", "/me/sign-out-everywhere", m.token));
  for (const token of [m.token, second]) {
    const res = await call(svc, "GET", "/me", token);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), "Bearer");
    await res.body?.cancel();
  }
  const fresh = await signIn(svc, m.username, MEMBER_PASSWORD);
  await expect(200, call(svc, "GET", "/me", fresh));
});

Deno.test("a token issued to the configured admin before accounts (no gen claim) stays valid", async () => {
  const { valid } = await tokens(TEST_SECRET, "admin");
  const me = await expect(200, call(svc, "GET", "/me", valid));
  assert.equal(me.role, "admin");
  // A member's name in such a token is that member, as any token of it.
  const m = await newMember(svc, admin);
  const old = (await tokens(TEST_SECRET, m.username)).valid;
  assert.equal((await expect(200, call(svc, "GET", "/me", old))).username, m.username);
  await expect(204, call(svc, "POST", "/me/sign-out-everywhere", m.token));
  await expect(401, call(svc, "GET", "/me", old));
});

Deno.test("GET /users lists every account with its uploads; the configured admin is one", async () => {
  const m = await newMember(svc, admin);
  await expect(201, upload(svc.app, { authorization: `Bearer ${m.token}` }, await makeImage()));
  const users = await expect(200, call(svc, "GET", "/users", admin));
  const mine = users.find((u: { username: string }) => u.username === m.username);
  assert.deepEqual(Object.keys(mine).sort(), [
    "created_at",
    "disabled",
    "role",
    "uploads",
    "username",
  ]);
  assert.deepEqual([mine.role, mine.disabled, mine.uploads], ["member", false, 1]);
  assert.equal(users.find((u: { username: string }) => u.username === "admin").role, "admin");
});

Deno.test("disabling an account stops its tokens and keys at once and refuses its sign-in", async () => {
  const m = await newMember(svc, admin);
  const { key } = await newKey(svc, m.token, ["upload"]);
  await expect(200, call(svc, "GET", "/me", key));
  const changed = await expect(
    200,
    call(svc, "PATCH", `/users/${m.username}`, admin, { disabled: true }),
  );
  assert.equal(changed.disabled, true);
  await expect(401, call(svc, "GET", "/me", m.token));
  await expect(401, call(svc, "GET", "/me", key));
  await expect(
    401,
    call(svc, "POST", "/auth/token", null, { username: m.username, password: MEMBER_PASSWORD }),
  );
  // Enabled again: it signs in afresh and its key works again; the old token stays ended.
  await expect(200, call(svc, "PATCH", `/users/${m.username}`, admin, { disabled: false }));
  await signIn(svc, m.username, MEMBER_PASSWORD);
  await expect(200, call(svc, "GET", "/me", key));
  await expect(401, call(svc, "GET", "/me", m.token));
});

Deno.test("the configured admin cannot be disabled or demoted (422 configured_admin); others can", async () => {
  for (const change of [{ disabled: true }, { role: "member" }]) {
    const body = await expect(422, call(svc, "PATCH", "/users/admin", admin, change));
    assert.equal(body.code, "configured_admin");
  }
  const m = await newMember(svc, admin);
  const promoted = await expect(
    200,
    call(svc, "PATCH", `/users/${m.username}`, admin, { role: "admin" }),
  );
  assert.equal(promoted.role, "admin");
  await expect(200, call(svc, "GET", "/users", m.token)); // an admin's page now
  await expect(404, call(svc, "PATCH", "/users/nobody_here", admin, { role: "member" }));
  await expect(422, call(svc, "PATCH", `/users/${m.username}`, admin, { role: "root" }));
});

Deno.test("an API key: rb_ and 43 characters, shown once, stored as its SHA-256, listed without it", async () => {
  const m = await newMember(svc, admin);
  const created = await expect(
    201,
    call(svc, "POST", "/me/api-keys", m.token, { name: "ShareX", scopes: ["upload", "upload"] }),
  );
  assert.match(created.key, /^rb_[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(created.scopes, ["upload"]);
  const [row] = await svc.db.sql`select * from api_keys where id = ${created.id}`;
  assert.equal(row.key_hash, createHash("sha256").update(created.key).digest("hex"));
  const dump = JSON.stringify(await svc.db.sql`select * from api_keys`) +
    JSON.stringify(await svc.db.sql`select * from audit_log`);
  assert.ok(!dump.includes(created.key.slice(3)), "the key is stored nowhere");
  const listed = await expect(200, call(svc, "GET", "/me/api-keys", m.token));
  assert.deepEqual(listed, [{
    id: created.id,
    name: "ShareX",
    scopes: ["upload"],
    created_at: created.created_at,
    last_used_at: null,
  }]);
  await expect(422, call(svc, "POST", "/me/api-keys", m.token, { name: "x", scopes: [] }));
  await expect(422, call(svc, "POST", "/me/api-keys", m.token, { name: "x", scopes: ["admin"] }));
});

Deno.test("a key acts as its owner: uploads are theirs and last_used_at is set", async () => {
  const m = await newMember(svc, admin);
  const { id, key } = await newKey(svc, m.token, ["upload"]);
  const img = await expect(
    201,
    upload(svc.app, { authorization: `Bearer ${key}` }, await makeImage()),
  );
  assert.equal(img.uploaded_by, m.username);
  const [k] = await svc.db.sql`select last_used_at from api_keys where id = ${id}`;
  assert.ok(k.last_used_at instanceof Date);
});

Deno.test("a revoked key answers 401 on its next request; another's key cannot be revoked", async () => {
  const m = await newMember(svc, admin);
  const other = await newMember(svc, admin);
  const { id, key } = await newKey(svc, m.token, ["upload", "edit", "delete"]);
  await expect(200, call(svc, "GET", "/me", key));
  await expect(404, call(svc, "DELETE", `/me/api-keys/${id}`, other.token));
  await expect(204, call(svc, "DELETE", `/me/api-keys/${id}`, m.token));
  await expect(401, call(svc, "GET", "/me", key));
  await expect(401, upload(svc.app, { authorization: `Bearer ${key}` }, await makeImage()));
  await expect(404, call(svc, "DELETE", `/me/api-keys/${id}`, m.token));
  assert.deepEqual(await expect(200, call(svc, "GET", "/me/api-keys", m.token)), []);
});

Deno.test("a key never signs in, and never manages keys, passwords, accounts or invites", async () => {
  const m = await newMember(svc, admin);
  const { key } = await newKey(svc, m.token, ["upload", "edit", "delete"]);
  await expect(
    401,
    call(svc, "POST", "/auth/token", null, { username: m.username, password: key }),
  );
  const adminKey = (await newKey(svc, admin, ["upload", "edit", "delete"])).key;
  const refused: [string, string, unknown?][] = [
    ["GET", "/me/api-keys"],
    ["POST", "/me/api-keys", { name: "n", scopes: ["upload"] }],
    ["PATCH", "/me/password", { current_password: MEMBER_PASSWORD, new_password: "x".repeat(12) }],
    ["POST", "/me/sign-out-everywhere"],
    ["GET", "/users"],
    ["POST", "/invites", {}],
    ["GET", "/audit"],
  ];
  for (const [method, path, body] of refused) {
    for (const k of [key, adminKey]) {
      const res = await expect(403, call(svc, method, path, k, body));
      assert.equal(res.code, "forbidden", `${method} ${path}`);
    }
  }
});

Deno.test("accepting invites is limited per address like sign-in", async () => {
  const ip = "192.0.2.77";
  for (let i = 0; i < 5; i++) {
    const res = await call(svc, "POST", `/invites/guess${i}/accept`, null, {
      username: "guesser",
      password: MEMBER_PASSWORD,
    }, ip);
    await res.body?.cancel();
    assert.equal(res.status, i < 4 ? 404 : 429, `attempt ${i + 1}`);
  }
  const code = await invite(svc, admin);
  const locked = await call(svc, "POST", `/invites/${code}/accept`, null, {
    username: "guesser",
    password: MEMBER_PASSWORD,
  }, ip);
  assert.equal(locked.status, 429);
  assert.ok(locked.headers.get("retry-after"));
  await locked.body?.cancel();
});
