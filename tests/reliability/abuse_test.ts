/**
 * Abuse: password guessing from many addresses behind a trusted proxy (each address locked, no
 * other), forged forwarding headers from an untrusted peer (the peer is locked, never the forged
 * addresses), a flood of anonymous reads, and a flood of uploads against a tiny thumbnail queue
 * (201/200 or 503 with Retry-After, never 500, health stays 200).
 *
 * Storage runs in a process of its own, as it does in production: an s3rver in this process
 * would share the floods' event loop, and on a starved machine answer health's storage check
 * after CHECK_TIMEOUT_MS.
 */
import assert from "node:assert/strict";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService } from "../_harness/app.ts";
import { disposeS3 } from "../_harness/s3.ts";
import { startS3Process } from "../_harness/s3_process.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import { fail, limiterRow, login } from "../_harness/login.ts";
import { assertBucketMatchesTables } from "../_harness/consistency.ts";
import { within } from "../_harness/waits.ts";

const pool = await ThumbnailPool.start({
  size: 1,
  maxQueue: 2,
  maxPixels: 50_000_000,
  timeoutMs: 15_000,
});
const s3 = await startS3Process();
const svc = await startService({
  s3,
  thumbnails: pool,
  env: {
    LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8",
    LOGIN_MAX_FAILURES: "3",
    LOGIN_COOLDOWN_SECONDS: "600",
  },
});
Deno.test.afterAll(async () => {
  await svc.close();
  await disposeS3(s3);
});
const auth = await authHeader(svc.app);
addEventListener("unload", () => pool.close());

const PROXY = "10.0.0.1";

Deno.test("brute force from many addresses through a trusted proxy locks each address and no other", async () => {
  // The file's other tests lock addresses of their own: count the rows this test starts.
  const [{ started }] = await svc.db.sql<{ started: Date }[]>`select clock_timestamp() as started`;
  const attackers = Array.from({ length: 24 }, (_, i) => `198.51.100.${i + 1}`);
  const v6 = "2001:db8::bad";
  const viaRealIp = (ip: string) => ({ ip: PROXY, headers: { "x-real-ip": ip } });
  const viaXff = (ip: string) => ({ ip: PROXY, headers: { "x-forwarded-for": `${ip}, ${PROXY}` } });
  // Everyone guesses at once, three times each, half named by X-Real-IP, half by X-Forwarded-For.
  const rounds: number[][] = [];
  for (let round = 0; round < 3; round++) {
    rounds.push(
      await Promise.all(
        [...attackers, v6].map((ip, i) => fail(svc.app, i % 2 ? viaXff(ip) : viaRealIp(ip))),
      ),
    );
  }
  assert.ok(rounds[0].every((s) => s === 401), `first round ${rounds[0]}`);
  assert.ok(rounds[1].every((s) => s === 401), `second round ${rounds[1]}`);
  assert.ok(rounds[2].every((s) => s === 429), `third round ${rounds[2]}`);
  for (const ip of [...attackers, v6]) {
    assert.deepEqual(await limiterRow(svc, ip), { failures: 3, locked: true }, ip);
  }
  // Locked even with the right password, by either header.
  const locked = await login(svc.app, viaXff(attackers[0]));
  assert.equal(locked.status, 429);
  assert.equal(locked.headers.get("retry-after"), "600");
  await locked.body?.cancel();
  // The proxy itself, a neighbour of the attackers and a direct client are not locked.
  assert.equal(await limiterRow(svc, PROXY), null);
  for (
    const opts of [viaRealIp("198.51.100.200"), viaXff("198.51.100.201"), { ip: "203.0.113.9" }]
  ) {
    const res = await login(svc.app, opts);
    assert.equal(res.status, 200, JSON.stringify(opts));
    await res.body?.cancel();
  }
  const [rows] = await svc.db
    .sql`select count(*)::int as n from login_failures
      where locked_until > now() and window_started_at >= ${started}`;
  assert.equal(rows.n, attackers.length + 1, "exactly the attackers are locked");
});

Deno.test("forged X-Real-IP / X-Forwarded-For from an untrusted peer lock the peer, never the forged addresses", async () => {
  const attacker = "203.0.113.66";
  const forged = Array.from({ length: 12 }, (_, i) => `192.0.2.${i + 1}`);
  const statuses: number[] = [];
  for (const [i, f] of forged.entries()) {
    const headers: Record<string, string> = i % 3 === 0
      ? { "x-real-ip": f }
      : i % 3 === 1
      ? { "x-forwarded-for": f }
      : { "x-real-ip": f, "x-forwarded-for": `${f}, ${PROXY}` };
    statuses.push(await fail(svc.app, { ip: attacker, headers }));
  }
  assert.deepEqual(statuses, [401, 401, ...Array(10).fill(429)]);
  assert.deepEqual(await limiterRow(svc, attacker), { failures: 3, locked: true });
  for (const f of forged) assert.equal(await limiterRow(svc, f), null, f);
  // The addresses the attacker named can still sign in, directly or through the proxy.
  for (const f of forged.slice(0, 3)) {
    for (const opts of [{ ip: f }, { ip: PROXY, headers: { "x-real-ip": f } }]) {
      const res = await login(svc.app, opts);
      assert.equal(res.status, 200, JSON.stringify(opts));
      await res.body?.cancel();
    }
  }
  // The attacker cannot unlock itself by claiming to be a trusted proxy's client.
  const res = await login(svc.app, { ip: attacker, headers: { "x-real-ip": "10.0.0.5" } });
  assert.equal(res.status, 429);
  await res.body?.cancel();
});

Deno.test("a flood of 500 concurrent anonymous reads answers only 200, 304 and 404", async () => {
  const imgs: { short_id: string; hash: string; file_url: string; thumbnail_url: string }[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await upload(svc.app, auth, await makeImage("jpeg", 200, 150), ["flood"]);
    assert.equal(res.status, 201);
    imgs.push(await res.json());
  }
  const paths = (i: number): [string, RequestInit] => {
    const img = imgs[i % imgs.length];
    switch (i % 10) {
      case 0:
        return ["/api/v1/images?limit=50", {}];
      case 1:
        return ["/api/v1/images?tags=flood", {}];
      case 2:
        return [`/api/v1/images/${img.short_id}`, {}];
      case 3:
        return [img.file_url, {}];
      case 4:
        return [img.thumbnail_url, { headers: { "if-none-match": "*" } }];
      case 5:
        return [img.file_url, { headers: { range: "bytes=0-99" } }];
      case 6:
        return ["/api/v1/tags?sort=count_desc", {}];
      case 7:
        return ["/api/v1/images/NOSUCHID", {}];
      case 8:
        return [img.file_url, { headers: { "if-none-match": `"${img.hash}"` } }];
      default:
        return ["/api/v1/health", {}];
    }
  };
  // A container's health check has probed before any flood: health then answers from its last
  // checks, refreshed in the background (HealthChecks), and never waits on storage mid-flood.
  const probe = await svc.app.request("/api/v1/health");
  assert.equal(probe.status, 200, await probe.text());
  let health = "";
  const started = performance.now();
  const answers = await within(
    Promise.all(Array.from({ length: 500 }, async (_, i) => {
      const [path, init] = paths(i);
      const res = await svc.app.request(path, init);
      if (path === "/api/v1/health" && res.status !== 200) health = await res.text();
      await res.body?.cancel();
      return res.status;
    })),
    30_000,
    "read flood",
  );
  const ms = Math.round(performance.now() - started);
  const counts: Record<number, number> = {};
  for (const s of answers) counts[s] = (counts[s] ?? 0) + 1;
  assert.ok(
    answers.every((s) => s === 200 || s === 206 || s === 304 || s === 404),
    `${JSON.stringify(counts)} in ${ms} ms ${health}`,
  );
  assert.equal(counts[404], 50, "exactly the unknown IDs are 404");
});

Deno.test("a flood of 30 uploads on a 1-worker pool with a queue of 2: 201/200 or 503 with Retry-After, never 500", async () => {
  const images = await Promise.all(
    Array.from({ length: 30 }, (_, i) => makeImage(i % 2 ? "jpeg" : "png", 1600, 1200)),
  );
  const answers = await within(
    Promise.all(images.map(async (bytes) => {
      const res = await upload(svc.app, auth, bytes);
      const body = await res.json();
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
    })),
    60_000,
    "upload flood",
  );
  const statuses = answers.map((a) => a.status);
  for (const a of answers) {
    assert.ok([200, 201, 503].includes(a.status), `${a.status} ${JSON.stringify(a.body)}`);
    if (a.status === 503) {
      assert.ok(Number(a.retryAfter) > 0, "503 without Retry-After");
      assert.equal(typeof a.body.detail, "string");
    }
  }
  assert.ok(statuses.includes(201), `no upload got through: ${statuses}`);
  assert.ok(statuses.includes(503), `the queue never filled: ${statuses}`);
  const health = await svc.app.request("/api/v1/health");
  assert.equal(health.status, 200, await health.text());
  // Refused uploads left nothing behind; accepted ones have their objects.
  await assertBucketMatchesTables(svc);
  const [pending] = await svc.db.sql`select count(*)::int as n from pending_deletes`;
  assert.equal(pending.n, 0);
  // Once the flood is over, an upload gets through again.
  const after = await upload(svc.app, auth, await makeImage("png", 64, 64));
  assert.equal(after.status, 201);
  assert.notEqual((await after.json()).thumbnail_key, null);
});
