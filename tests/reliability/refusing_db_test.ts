/**
 * A database that refuses new connections (issue 17), with each SQLSTATE PostgreSQL sends at
 * connect while it is starting up, failing over, full or shutting down: every route, API and
 * pages, answers 503 with Retry-After and its usual body (never a 500, never a hang),
 * health names the database, and the service recovers by itself once connections are accepted.
 *
 * Each refusal is PostgreSQL's own: ALLOW_CONNECTIONS false (55000), a role's connection limit
 * (53300), and a login event trigger (PostgreSQL 17 and later) that terminates the new backend
 * (57P01) or fails it with 57P03. On an older test server the file starts an embedded
 * PostgreSQL of its own. The service connects as an ordinary role that owns its database,
 * since superusers are exempt from connection limits.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { startService, type TestService } from "../_harness/app.ts";
import { serverUrl } from "../_harness/db.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import { startEmbedded } from "../_harness/resolve_db.ts";

/**
 * Hang guard: ~10x the slowest answer measured, 3.5-4.4 s with 39 requests at once on two cores
 * under load (the pool's connect and queue timeouts, 3 s and 4 s, end every wait long before).
 * Only a hang fails it; the statuses and bodies are the check.
 */
const HANG_GUARD_MS = 45_000;

const given = postgres(serverUrl(), { max: 1, onnotice: () => {} });
const [{ v }] = await given`select current_setting('server_version_num')::int as v`;
await given.end();
const own = v < 170000 ? await startEmbedded() : null;
const server = own?.url ?? serverUrl();
const admin = postgres(server, { max: 1, onnotice: () => {} });

const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
const role = `t_role_${suffix}`;
const name = `t_refuse_${suffix}`;
await admin.unsafe(`create role ${role} login password '${role}'`);
await admin.unsafe(`create database ${name} owner ${role}`);
const dbUrl = (user: string) => {
  const u = new URL(server);
  u.username = user;
  u.password = user === role ? role : u.password;
  u.pathname = `/${name}`;
  return u.toString();
};
// As a superuser in the service's database: the login trigger that refuses on demand.
const inDb = postgres(dbUrl(new URL(server).username), { max: 1, onnotice: () => {} });
await inDb.unsafe(`
  create function refuse_login() returns event_trigger language plpgsql as $$
  declare code text := current_setting('app.refuse', true);
  begin
    if code is null or code = '' then return; end if;
    if code = '57P01' then perform pg_terminate_backend(pg_backend_pid()); end if;
    raise exception 'refused for the test' using errcode = code;
  end $$;
  create event trigger refuse_login on login execute function refuse_login();`);
await inDb.end();

const { createSql } = await import("../../db/client.ts");
const inspect = createSql(dbUrl(role), { bounded: false, max: 2 });
const svc: TestService = await startService({
  db: { url: dbUrl(role), name, sql: inspect, drop: async () => {} },
});
const auth = await authHeader(svc.app);
const image = await (await upload(svc.app, auth, await makeImage("png", 32, 32), ["cat"])).json();
// The original is read once here, so that its file route depends only on the database.
await (await svc.app.request(`/api/v1/images/${image.short_id}/file`)).arrayBuffer();

Deno.test.afterAll(async () => {
  await inspect.end({ timeout: 1 });
  await svc.close();
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`drop role if exists ${role}`);
  await admin.end();
  await own?.stop();
});

const json = { "content-type": "application/json", ...auth };
/** Every kind of route: API reads and writes, sign-in, bytes, pages. */
const requests: [string, RequestInit?][] = [
  ["/api/v1/images"],
  ["/api/v1/images?tags=cat"],
  [`/api/v1/images/${image.short_id}`],
  [`/api/v1/images/${image.short_id}/file`],
  [`/api/v1/images/${image.short_id}/thumbnail`],
  ["/api/v1/tags"],
  ["/api/v1/auth/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: "wrong" }),
  }],
  [`/api/v1/images/${image.short_id}/tags`, {
    method: "PATCH",
    headers: json,
    body: JSON.stringify({ add: ["dog"] }),
  }],
  [`/api/v1/images/${image.short_id}`, { method: "DELETE", headers: auth }],
  ["/"],
  ["/tags"],
  [`/i/${image.short_id}`],
];

async function answers() {
  const png = await makeImage("png", 16, 16);
  const all = [
    ...requests.map(([path, init]) => () => svc.app.request(path, init)),
    () => upload(svc.app, auth, png, ["new"]),
  ];
  // Three of each at once, as a burst of readers would arrive.
  return await Promise.all([...all, ...all, ...all].map(async (send, i) => {
    const started = performance.now();
    const res = await send();
    const body = await res.text();
    return { i, res, body, ms: performance.now() - started };
  }));
}

function refuseWith(code: string): { on: () => Promise<unknown>; off: () => Promise<unknown> } {
  switch (code) {
    case "55000":
      return {
        on: () => admin.unsafe(`alter database ${name} allow_connections false`),
        off: () => admin.unsafe(`alter database ${name} allow_connections true`),
      };
    case "53300":
      return {
        on: () => admin.unsafe(`alter role ${role} connection limit 0`),
        off: () => admin.unsafe(`alter role ${role} connection limit -1`),
      };
    default:
      return {
        on: () => admin.unsafe(`alter role ${role} in database ${name} set app.refuse = '${code}'`),
        off: () => admin.unsafe(`alter role ${role} in database ${name} reset app.refuse`),
      };
  }
}

for (const code of ["55000", "53300", "57P03", "57P01"]) {
  Deno.test(`a database refusing connections with ${code}: 503 everywhere, never a 500 or a hang, then recovery`, async () => {
    const refusal = refuseWith(code);
    await refusal.on();
    try {
      // Open connections are not refused: end them, so that every request needs a new one.
      await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity
                          where usename = '${role}'`);
      const logged = svc.logs.length;
      const all = await answers();
      const slowest = Math.max(...all.map((a) => a.ms));
      console.log(`${code}: slowest of ${all.length} answers ${slowest.toFixed(0)} ms`);
      for (const { res, body, ms, i } of all) {
        const what = `#${i} ${res.url || ""} ${res.status} ${body.slice(0, 120)}`;
        assert.equal(res.status, 503, what);
        assert.ok(ms < HANG_GUARD_MS, `${what}: ${ms.toFixed(0)} ms`);
        assert.equal(res.headers.get("retry-after"), "5", what);
        if (/json/.test(res.headers.get("content-type") ?? "")) {
          assert.deepEqual(JSON.parse(body), {
            detail: "Database is unavailable, try again shortly",
          }, what);
        } else {
          assert.match(body, /Temporarily unavailable/, what);
        }
      }
      // The refusal itself happened, with this code, and was logged with a request id.
      const lines = svc.logs.slice(logged).filter((l) => l.includes(`"code":"${code}"`));
      assert.ok(lines.length > 0, `no log line carries ${code}`);
      assert.ok(lines.every((l) => l.includes('"request_id"')), "logged with the request id");
      // Health reuses a result for up to a second (and a live check may have finished after the
      // last test's recovery): it names the database once its result is this outage's.
      let checks: unknown;
      for (const until = Date.now() + 3000; Date.now() < until;) {
        const health = await svc.app.request("/api/v1/health");
        checks = (await health.json()).checks;
        if (health.status === 503) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.deepEqual(checks, { database: "unavailable", storage: "ok" });
    } finally {
      await refusal.off();
    }
    // Recovery without a restart.
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline) {
      const res = await svc.app.request("/api/v1/images");
      await res.body?.cancel();
      if ((status = res.status) === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 200, "the service recovered");
    // Nothing was changed by the refused writes.
    const [row] = await inspect`select count(*)::int as n from images`;
    assert.equal(row.n, 1);
  });
}
