/**
 * What accounts record (issue 42) through the API with real PostgreSQL: the audit rows of each
 * action (and nothing secret in them), favourites and their paging, and attribution through
 * deduplication, the `uploader` filter, export and restore.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startService, TEST_PASSWORD } from "./_harness/app.ts";
import {
  call,
  expect,
  invite,
  MEMBER_PASSWORD,
  newKey,
  newMember,
  signIn,
} from "./_harness/accounts.ts";
import { makeImage, randomTag, upload, uploadForm } from "./_harness/images.ts";
import { runTool, serveOverHttp } from "./_harness/transfer.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const admin = await signIn(svc);

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
async function uploaded(token: string, tags: string[] = [], bytes?: Uint8Array) {
  const res = await upload(svc.app, bearer(token), bytes ?? await makeImage(), tags);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return await res.json();
}

/** The newest audit entries, newest first. */
async function audit(n = 50) {
  return (await expect(200, call(svc, "GET", `/audit?limit=${n}`, admin))).items as {
    at: string;
    actor: string;
    via: string | null;
    action: string;
    target: string | null;
    detail: Record<string, unknown>;
  }[];
}

Deno.test("every kind of change writes its audit row: who, through which key, what, to what", async () => {
  const m = await newMember(svc, admin, "auditee");
  const { key, id: keyId } = await newKey(svc, m.token, ["upload", "edit", "delete"], "my script");
  const tag = randomTag();
  const a = await uploaded(m.token, [tag]);
  const b = (await (await upload(svc.app, bearer(key), await makeImage())).json()).short_id;
  await expect(200, call(svc, "PATCH", `/images/${a.short_id}/tags`, m.token, { add: ["x_1"] }));
  await expect(200, call(svc, "PATCH", `/images/${a.short_id}`, key, { text: "hello" }));
  await expect(200, call(svc, "POST", `/images/${b}/merge-into/${a.short_id}`, m.token));
  await expect(201, call(svc, "PUT", "/tag-aliases/lol_a", admin, { target: tag }));
  await expect(204, call(svc, "DELETE", "/tag-aliases/lol_a", admin));
  await expect(201, call(svc, "PUT", `/tag-implications/${tag}`, admin, { implies: ["y_1"] }));
  await expect(204, call(svc, "DELETE", `/tag-implications/${tag}`, admin));
  await expect(200, call(svc, "PATCH", `/tags/${tag}`, admin, { name: `${tag}_2` }));
  await expect(204, call(svc, "DELETE", `/images/${a.short_id}`, key));
  const code = await invite(svc, admin);
  await expect(204, call(svc, "DELETE", `/invites/${code}`, admin));
  await expect(200, call(svc, "PATCH", "/users/auditee", admin, { role: "admin" }));
  await expect(
    204,
    call(svc, "PATCH", "/me/password", m.token, {
      current_password: MEMBER_PASSWORD,
      new_password: "another password",
    }),
  );
  await expect(204, call(svc, "DELETE", `/me/api-keys/${keyId}`, m.token));
  await expect(204, call(svc, "POST", "/me/sign-out-everywhere", m.token));

  const rows = (await audit()).reverse();
  const from = rows.findIndex((r) => r.action === "user.create" && r.target === "auditee");
  const seen = rows.slice(from).map((r) => [r.actor, r.via, r.action, r.target]);
  assert.deepEqual(seen, [
    ["auditee", null, "user.create", "auditee"],
    ["auditee", null, "api_key.create", "my script"],
    ["auditee", null, "image.upload", a.short_id],
    ["auditee", "my script", "image.upload", b],
    ["auditee", null, "image.tags", a.short_id],
    ["auditee", "my script", "image.caption", a.short_id],
    ["auditee", null, "image.merge", b],
    ["admin", null, "tag_alias.put", "lol_a"],
    ["admin", null, "tag_alias.delete", "lol_a"],
    ["admin", null, "tag_implication.put", tag],
    ["admin", null, "tag_implication.delete", tag],
    ["admin", null, "tag.rename", tag],
    ["auditee", "my script", "image.delete", a.short_id],
    ["admin", null, "invite.create", `invite ${code.slice(0, 4)}…`],
    ["admin", null, "invite.withdraw", `invite ${code.slice(0, 4)}…`],
    ["admin", null, "user.update", "auditee"],
    ["auditee", null, "password.change", "auditee"],
    ["auditee", null, "api_key.revoke", "my script"],
    ["auditee", null, "account.sign_out_everywhere", "auditee"],
  ]);
  const detail = (action: string) => rows.slice(from).find((r) => r.action === action)!.detail;
  assert.deepEqual(detail("image.merge"), { into: a.short_id });
  assert.deepEqual(detail("user.update"), { role: { from: "member", to: "admin" } });
  assert.deepEqual(detail("tag.rename"), { to: `${tag}_2`, merged: false });
  assert.deepEqual(detail("api_key.create"), { id: keyId, scopes: ["upload", "edit", "delete"] });
  assert.deepEqual(detail("image.upload"), { created: true, tags: [tag] });
});

Deno.test("nothing secret reaches the audit log: no password, key, token, hash or invite code", async () => {
  const code = await invite(svc, admin);
  const res = await expect(
    201,
    call(svc, "POST", `/invites/${code}/accept`, null, {
      username: "secretive",
      password: MEMBER_PASSWORD,
    }),
  );
  const { key } = await newKey(svc, res.access_token, ["upload"]);
  await expect(
    204,
    call(svc, "PATCH", "/me/password", res.access_token, {
      current_password: MEMBER_PASSWORD,
      new_password: "new secret password",
    }),
  );
  const dump = JSON.stringify(await svc.db.sql`select * from audit_log`);
  for (
    const secret of [
      MEMBER_PASSWORD,
      "new secret password",
      TEST_PASSWORD,
      key,
      key.slice(3, 20),
      res.access_token,
      admin,
      code,
      "scrypt$",
    ]
  ) {
    assert.ok(!dump.includes(secret), `the audit log holds ${secret.slice(0, 12)}…`);
  }
});

Deno.test("GET /audit pages newest first through next_cursor; members get 403", async () => {
  // Four rows of its own, so two pages of two are full whatever ran before (a shuffled run).
  for (let i = 0; i < 4; i++) await invite(svc, admin);
  const first = await expect(200, call(svc, "GET", "/audit?limit=2", admin));
  assert.equal(first.items.length, 2);
  assert.ok(first.next_cursor);
  const second = await expect(
    200,
    call(svc, "GET", `/audit?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`, admin),
  );
  const all = await audit(4);
  assert.deepEqual([...first.items, ...second.items], all);
  assert.ok(Date.parse(all[0].at) >= Date.parse(all[3].at));
  await expect(422, call(svc, "GET", "/audit?cursor=bogus", admin));
  const m = await newMember(svc, admin);
  assert.equal((await expect(403, call(svc, "GET", "/audit", m.token))).code, "forbidden");
});

Deno.test("favourites: PUT and DELETE are idempotent 204s and keep favorite_count exact", async () => {
  const a = await newMember(svc, admin);
  const b = await newMember(svc, admin);
  const img = await uploaded(a.token);
  const count = async () =>
    (await expect(200, call(svc, "GET", `/images/${img.short_id}`))).favorite_count;
  assert.equal(img.favorite_count, 0);
  await expect(204, call(svc, "PUT", `/me/favorites/${img.short_id}`, a.token));
  await expect(204, call(svc, "PUT", `/me/favorites/${img.short_id}`, a.token));
  assert.equal(await count(), 1);
  await expect(204, call(svc, "PUT", `/me/favorites/${img.short_id}`, b.token));
  assert.equal(await count(), 2);
  await expect(204, call(svc, "DELETE", `/me/favorites/${img.short_id}`, a.token));
  await expect(204, call(svc, "DELETE", `/me/favorites/${img.short_id}`, a.token));
  assert.equal(await count(), 1);
  await expect(404, call(svc, "PUT", "/me/favorites/AbCdEfGh", a.token));
  await expect(404, call(svc, "PUT", "/me/favorites/bad", a.token));
  // Deleting the image takes its favourites with it.
  await expect(204, call(svc, "DELETE", `/images/${img.short_id}`, a.token));
  // Counted for this image only: other tests' favourites may be there (a shuffled run).
  const [{ n }] = await svc.db.sql`
    select count(*)::int as n from favorites f join images i on i.id = f.image_id
    where i.short_id = ${img.short_id}`;
  const [{ gone }] = await svc.db.sql`
    select count(*)::int as gone from images where short_id = ${img.short_id}`;
  assert.equal(gone, 0, "the image is deleted");
  const [{ orphans }] = await svc.db.sql`
    select count(*)::int as orphans from favorites f
    where not exists (select 1 from images i where i.id = f.image_id)`;
  assert.equal(n + orphans, 0);
});

Deno.test("GET /me/favorites pages most recently favourited first, each account its own", async () => {
  const a = await newMember(svc, admin);
  const b = await newMember(svc, admin);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await uploaded(admin)).short_id);
  for (const id of [ids[2], ids[0], ids[4], ids[1], ids[3]]) {
    await expect(204, call(svc, "PUT", `/me/favorites/${id}`, a.token));
  }
  await expect(204, call(svc, "PUT", `/me/favorites/${ids[2]}`, a.token)); // no change of order
  await expect(204, call(svc, "PUT", `/me/favorites/${ids[0]}`, b.token));
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page = await expect(200, call(svc, "GET", `/me/favorites?limit=2${q}`, a.token));
    assert.ok(page.items.length <= 2);
    seen.push(...page.items.map((i: { short_id: string }) => i.short_id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor);
  assert.deepEqual(seen, [ids[3], ids[1], ids[4], ids[0], ids[2]]);
  assert.equal(pages, 3);
  const theirs = await expect(200, call(svc, "GET", "/me/favorites", b.token));
  assert.deepEqual(theirs.items.map((i: { short_id: string }) => i.short_id), [ids[0]]);
  assert.equal(theirs.next_cursor, null);
  await expect(422, call(svc, "GET", "/me/favorites?cursor=xyz", a.token));
  // `among`: which of these are favourites (a page's stars).
  const among = await expect(
    200,
    call(svc, "GET", `/me/favorites?among=${ids[0]},${ids[1]},AbCdEfGh,bad`, b.token),
  );
  assert.deepEqual(among, { short_ids: [ids[0]] });
  await expect(401, call(svc, "GET", "/me/favorites"));
});

Deno.test("uploaded_by names the uploader; a duplicate upload keeps the first one", async () => {
  const a = await newMember(svc, admin);
  const b = await newMember(svc, admin);
  const bytes = await makeImage();
  const first = await uploaded(a.token, ["one"], bytes);
  assert.equal(first.uploaded_by, a.username);
  const again = await upload(svc.app, bearer(b.token), bytes, ["two"]);
  assert.equal(again.status, 200);
  const dup = await again.json();
  assert.equal(dup.short_id, first.short_id);
  assert.equal(dup.uploaded_by, a.username);
  const [row] = await svc.db.sql`
    select u.username from images i join users u on u.id = i.uploaded_by
    where i.short_id = ${first.short_id}`;
  assert.equal(row.username, a.username);
});

Deno.test("GET /images?uploader= keeps that person's images, with tags and with q", async () => {
  const a = await newMember(svc, admin);
  const b = await newMember(svc, admin);
  const tag = randomTag();
  const a1 = (await uploaded(a.token, [tag])).short_id;
  const a2 = (await uploaded(a.token)).short_id;
  const b1 = (await uploaded(b.token, [tag])).short_id;
  const list = async (query: string) =>
    (await expect(200, call(svc, "GET", `/images?${query}`))).items.map(
      (i: { short_id: string }) => i.short_id,
    );
  assert.deepEqual(await list(`uploader=${a.username}`), [a2, a1]);
  assert.deepEqual(await list(`uploader=${a.username.toUpperCase()}`), [a2, a1]);
  assert.deepEqual(await list(`uploader=${a.username}&tags=${tag}`), [a1]);
  assert.deepEqual(await list(`uploader=${a.username}&tags=-${tag}`), [a2]);
  assert.deepEqual(await list(`uploader=${b.username}&tags=${tag}`), [b1]);
  assert.deepEqual(await list("uploader=nobody_at_all"), []);
  // Paged by the cursor.
  const page = await expect(200, call(svc, "GET", `/images?uploader=${a.username}&limit=1`));
  assert.deepEqual(page.items.map((i: { short_id: string }) => i.short_id), [a2]);
  const next = await expect(
    200,
    call(svc, "GET", `/images?uploader=${a.username}&limit=1&cursor=${page.next_cursor}`),
  );
  assert.deepEqual(next.items.map((i: { short_id: string }) => i.short_id), [a1]);
  // With caption words: only theirs among the images that carry them.
  for (const id of [a1, b1]) {
    await expect(200, call(svc, "PATCH", `/images/${id}`, admin, { text: "banana split" }));
  }
  assert.deepEqual(await list(`uploader=${a.username}&q=banana`), [a1]);
  assert.deepEqual(await list(`uploader=${b.username}&q=banana&tags=${tag}`), [b1]);
  assert.deepEqual(await list(`uploader=${a.username}&q=cherry`), []);
});

Deno.test("uploaded_by on an upload: an admin's restore names anyone known, else nobody; a member's is 403", async () => {
  const a = await newMember(svc, admin);
  const send = async (token: string, name: string) => {
    const form = uploadForm(await makeImage());
    form.append("uploaded_by", name);
    return await svc.app.request("/api/v1/images", {
      method: "POST",
      headers: bearer(token),
      body: form,
    });
  };
  assert.equal((await expect(201, send(admin, a.username.toUpperCase()))).uploaded_by, a.username);
  assert.equal((await expect(201, send(admin, "gone_person"))).uploaded_by, null);
  assert.equal((await expect(201, send(admin, ""))).uploaded_by, null);
  assert.equal((await expect(403, send(a.token, a.username))).code, "forbidden");
});

Deno.test("export writes uploaded_by; a restore keeps it where that account exists, else null", async () => {
  const a = await newMember(svc, admin, "exporter_a");
  const b = await newMember(svc, admin, "exporter_b");
  const ia = (await uploaded(a.token)).short_id;
  const ib = (await uploaded(b.token)).short_id;
  const sourceHttp = serveOverHttp(svc);
  const target = await startService();
  const targetHttp = serveOverHttp(target);
  const out = await Deno.makeTempDir({ prefix: "accounts-export-" });
  try {
    const exported = await runTool("export", [out, "--url", sourceHttp.base]);
    assert.equal(exported.code, 0, exported.output);
    const lines = (await Deno.readTextFile(join(out, "manifest.jsonl"))).trim().split("\n")
      .map((l) => JSON.parse(l));
    const entry = (id: string) => lines.find((l) => l.short_id === id);
    assert.equal(entry(ia).uploaded_by, "exporter_a");
    assert.equal(entry(ib).uploaded_by, "exporter_b");
    assert.ok(!("favorite_count" in entry(ia)));
    // The target knows exporter_a only; the restore runs with an admin's API key.
    const targetAdmin = await signIn(target);
    await newMember(target, targetAdmin, "exporter_a");
    const { key } = await newKey(target, targetAdmin, ["upload"]);
    const restored = await runTool("import", ["--restore", out, "--url", targetHttp.base], {
      env: { IMAGEBOARD_API_KEY: key, IMAGEBOARD_PASSWORD: "" },
    });
    assert.equal(restored.code, 0, restored.output);
    const got = async (id: string) =>
      (await expect(200, call(target, "GET", `/images/${id}`))).uploaded_by;
    assert.equal(await got(ia), "exporter_a");
    assert.equal(await got(ib), null);
  } finally {
    await targetHttp.close();
    await target.close();
    await sourceHttp.close();
    await Deno.remove(out, { recursive: true });
  }
});
