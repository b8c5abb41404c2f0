/**
 * The login failure counter, per source address: LOGIN_MAX_FAILURES consecutive failed sign-ins
 * within LOGIN_WINDOW_SECONDS lock the address for LOGIN_COOLDOWN_SECONDS; while locked, every
 * attempt, right or wrong, is 429 with `Retry-After` set to the cooldown; a successful sign-in
 * resets the count to zero. One test per state and transition, plus window expiry, cooldown end,
 * client addresses behind proxies, replicas and concurrency. Through HTTP, against PostgreSQL;
 * the passing of time is simulated by moving a row's timestamps back, always leaving the request
 * that follows half a minute or more of margin, so a busy machine cannot push it over an edge.
 */
import assert from "node:assert/strict";
import { createApp } from "../wiring/app.ts";
import { startService, type TestService, withService as withTestService } from "./_harness/app.ts";
import { fail, limiterRow, login, timePasses } from "./_harness/login.ts";

const LIMITS = {
  LOGIN_MAX_FAILURES: "3",
  LOGIN_WINDOW_SECONDS: "900",
  LOGIN_COOLDOWN_SECONDS: "600",
};
const IP = "203.0.113.7";

/** A service with LIMITS, and `env` on top. */
const withService = (env: Record<string, string>, fn: (svc: TestService) => Promise<void>) =>
  withTestService({ ...LIMITS, ...env }, fn);

async function assertLocked(res: Response, cooldown = 600) {
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), String(cooldown));
  assert.deepEqual(await res.json(), {
    code: "login_locked",
    detail: "Too many failed sign-in attempts; try again later",
    retry_after: cooldown,
  });
}

async function failTimes(svc: TestService, n: number, ip = IP) {
  for (let i = 0; i < n; i++) assert.equal(await fail(svc.app, { ip }), 401, `failure ${i + 1}`);
}

Deno.test("counting: a failure below the limit is 401 and increases the count", async () => {
  await withService({}, async (svc) => {
    assert.equal(await limiterRow(svc, IP), null);
    assert.equal(await fail(svc.app), 401);
    assert.deepEqual(await limiterRow(svc, IP), { failures: 1, locked: false });
    assert.equal(await fail(svc.app), 401);
    assert.deepEqual(await limiterRow(svc, IP), { failures: 2, locked: false });
  });
});

Deno.test("counting -> locked: the LOGIN_MAX_FAILURES-th failure in the window is 429", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    await assertLocked(await login(svc.app, { password: "wrong" }));
    assert.deepEqual(await limiterRow(svc, IP), { failures: 3, locked: true });
  });
});

Deno.test("locked: every attempt during the cooldown is 429, right or wrong", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    assert.equal(await fail(svc.app), 429);
    const [before] = await svc.db.sql`select locked_until from login_failures where ip = ${IP}`;
    await assertLocked(await login(svc.app)); // the right password: still locked
    await assertLocked(await login(svc.app, { password: "wrong", encoding: "form" }));
    await timePasses(svc, IP, 570); // half a minute of the cooldown left
    await assertLocked(await login(svc.app));
    // Attempts during the lock neither extend it nor count.
    const [after] = await svc.db.sql`
      select locked_until + interval '570 seconds' as locked_until from login_failures
      where ip = ${IP}`;
    assert.equal(after.locked_until.getTime(), before.locked_until.getTime());
    assert.deepEqual(await limiterRow(svc, IP), { failures: 3, locked: true });
  });
});

Deno.test("counting: a successful login resets the count to zero", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    assert.equal((await login(svc.app)).status, 200);
    assert.deepEqual(await limiterRow(svc, IP), { failures: 0, locked: false });
    await failTimes(svc, 2); // would have locked without the reset
    assert.equal(await fail(svc.app), 429);
  });
});

Deno.test("failures older than the window no longer count", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    await timePasses(svc, IP, 901);
    assert.equal(await fail(svc.app), 401); // a new window, at 1
    assert.deepEqual(await limiterRow(svc, IP), { failures: 1, locked: false });
    await failTimes(svc, 1);
    assert.equal(await fail(svc.app), 429);
  });
});

Deno.test("failures inside the window still count just before it ends", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    await timePasses(svc, IP, 870); // half a minute of the window left
    assert.equal(await fail(svc.app), 429);
  });
});

Deno.test("after the cooldown the count starts from zero again", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    assert.equal(await fail(svc.app), 429);
    await timePasses(svc, IP, 601);
    assert.equal(await fail(svc.app), 401, "one wrong attempt after the cooldown is 401");
    assert.deepEqual(await limiterRow(svc, IP), { failures: 1, locked: false });
    assert.equal(await fail(svc.app), 401);
    assert.equal(await fail(svc.app), 429, "it takes LOGIN_MAX_FAILURES more to lock again");
  });
});

Deno.test("after a real cooldown on the database's clock the right password signs in", async () => {
  // Ten seconds: the two requests that must still meet the lock have ample time on a busy machine.
  await withService({ LOGIN_COOLDOWN_SECONDS: "10", LOGIN_MAX_FAILURES: "2" }, async (svc) => {
    assert.equal(await fail(svc.app), 401);
    await assertLocked(await login(svc.app, { password: "wrong" }), 10);
    await assertLocked(await login(svc.app), 10);
    // Wait, without moving anything, until the database's clock has passed the lock (a bound of
    // a minute, so a lock that never ends fails here rather than hanging).
    const deadline = Date.now() + 60_000;
    while ((await limiterRow(svc, IP))?.locked) {
      assert.ok(Date.now() < deadline, "the lock outlived its cooldown by far");
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal((await login(svc.app)).status, 200);
  });
});

Deno.test("one address is locked while another is not", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 2);
    assert.equal(await fail(svc.app), 429);
    assert.equal(await fail(svc.app, { ip: "198.51.100.20" }), 401);
    assert.equal((await login(svc.app, { ip: "198.51.100.21" })).status, 200);
    assert.equal((await login(svc.app, { ip: "2001:db8::7" })).status, 200);
    // The same address spelled as IPv4-mapped IPv6 is the same client.
    await assertLocked(await login(svc.app, { ip: "::ffff:203.0.113.7" }));
  });
});

Deno.test("a forged X-Forwarded-For prefix from a trusted proxy does not lock the forged address", async () => {
  await withService({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8" }, async (svc) => {
    const victim = "198.51.100.66";
    // The attacker at 203.0.113.7 sends "X-Forwarded-For: victim"; the proxy appends the truth.
    const viaProxy = { ip: "10.0.0.2", headers: { "x-forwarded-for": `${victim}, ${IP}` } };
    assert.equal(await fail(svc.app, viaProxy), 401);
    assert.equal(await fail(svc.app, viaProxy), 401);
    assert.equal(await fail(svc.app, viaProxy), 429);
    assert.deepEqual(await limiterRow(svc, IP), { failures: 3, locked: true });
    assert.equal(await limiterRow(svc, victim), null);
    assert.equal(await limiterRow(svc, "10.0.0.2"), null);
    const asVictim = { ip: "10.0.0.2", headers: { "x-forwarded-for": victim } };
    assert.equal((await login(svc.app, asVictim)).status, 200);
    // The warning about X-Forwarded-For is written, but not once per request.
    const warnings = svc.logs.filter((l) => l.includes("X-Forwarded-For"));
    assert.equal(warnings.length, 1);
    // X-Real-IP from the trusted proxy wins over X-Forwarded-For.
    const real = { ip: "10.0.0.2", headers: { "x-real-ip": IP, "x-forwarded-for": victim } };
    await assertLocked(await login(svc.app, real));
  });
});

Deno.test("behind a load balancer that passes X-Real-IP through, x-forwarded-for mode counts the real client", async () => {
  // AWS ALB and Google's and Azure's load balancers append the client to X-Forwarded-For and pass
  // a client's own X-Real-IP through unchanged: a new X-Real-IP per guess, and nothing locks.
  const viaAlb = (forged: string) => ({
    ip: "10.0.0.2",
    headers: { "x-real-ip": forged, "x-forwarded-for": `${forged}, ${IP}` },
  });
  const forged = (i: number) => `198.51.100.${i}`;
  await withService({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8" }, async (svc) => {
    // The default believes X-Real-IP: right for nginx, which overwrites it; wrong here.
    for (let i = 1; i <= 5; i++) assert.equal(await fail(svc.app, viaAlb(forged(i))), 401);
  });
  await withService({
    LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8",
    LOGIN_CLIENT_IP_HEADER: "x-forwarded-for",
  }, async (svc) => {
    assert.equal(await fail(svc.app, viaAlb(forged(1))), 401);
    assert.equal(await fail(svc.app, viaAlb(forged(2))), 401);
    assert.equal(await fail(svc.app, viaAlb(forged(3))), 429);
    await assertLocked(await login(svc.app, viaAlb(forged(4))));
    assert.deepEqual(await limiterRow(svc, IP), { failures: 3, locked: true });
    for (let i = 1; i <= 4; i++) assert.equal(await limiterRow(svc, forged(i)), null);
    // No warning: X-Forwarded-For is the configured source here.
    assert.equal(svc.logs.filter((l) => l.includes("have the proxy set X-Real-IP")).length, 0);
  });
});

Deno.test("IPv6 clients are counted by their /64", async () => {
  await withService({}, async (svc) => {
    assert.equal(await fail(svc.app, { ip: "2001:db8:1:2::1" }), 401);
    assert.equal(await fail(svc.app, { ip: "2001:db8:1:2:aaaa::7" }), 401);
    assert.equal(await fail(svc.app, { ip: "2001:db8:1:2:ffff:ffff:ffff:ffff" }), 429);
    await assertLocked(await login(svc.app, { ip: "2001:db8:1:2::beef" }));
    const [row] = await svc.db.sql`select ip from login_failures`;
    assert.equal(row.ip, "2001:db8:1:2::/64");
    // The next /64 is another client, and IPv4-mapped addresses stay IPv4.
    assert.equal((await login(svc.app, { ip: "2001:db8:1:3::1" })).status, 200);
    assert.equal(await fail(svc.app, { ip: "::ffff:198.51.100.9" }), 401);
    assert.deepEqual(await limiterRow(svc, "198.51.100.9"), { failures: 1, locked: false });
  });
});

Deno.test("forwarding headers from an untrusted peer are ignored", async () => {
  await withService({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8" }, async (svc) => {
    const other = "198.51.100.66";
    const forged = { ip: IP, headers: { "x-real-ip": other, "x-forwarded-for": other } };
    await failTimes(svc, 2);
    assert.equal(await fail(svc.app, forged), 429);
    assert.equal(await limiterRow(svc, other), null);
    const viaProxy = { ip: "10.0.0.2", headers: { "x-real-ip": other } };
    assert.equal((await login(svc.app, viaProxy)).status, 200);
  });
});

Deno.test("two replicas on one database share the lock", async () => {
  await withService({}, async (first) => {
    const second = await startService({ db: first.db, s3: first.s3, env: LIMITS });
    try {
      assert.equal(await fail(first.app), 401);
      assert.equal(await fail(second.app), 401);
      assert.equal(await fail(first.app), 429);
      await assertLocked(await login(second.app));
    } finally {
      await second.close();
    }
  });
});

Deno.test("20 wrong attempts at once lock after exactly LOGIN_MAX_FAILURES", async () => {
  await withService({ LOGIN_MAX_FAILURES: "5" }, async (svc) => {
    // Two app instances, so the attempts also race across "replicas".
    const other = createApp(svc.services);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => fail(i % 2 ? other : svc.app)),
    );
    assert.equal(statuses.filter((s) => s === 401).length, 4, statuses.join(" "));
    assert.equal(statuses.filter((s) => s === 429).length, 16, statuses.join(" "));
    assert.deepEqual(await limiterRow(svc, IP), { failures: 5, locked: true });
  });
});

Deno.test("concurrent failures below the limit are all counted", async () => {
  await withService({ LOGIN_MAX_FAILURES: "50" }, async (svc) => {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => fail(svc.app)));
    assert.deepEqual(new Set(statuses), new Set([401]));
    assert.deepEqual(await limiterRow(svc, IP), { failures: 20, locked: false });
  });
});

Deno.test("stale limiter rows are deleted; live ones are kept", async () => {
  await withService({}, async (svc) => {
    await failTimes(svc, 1, "198.51.100.1"); // window will be over
    await failTimes(svc, 2, "198.51.100.2");
    assert.equal(await fail(svc.app, { ip: "198.51.100.2" }), 429); // locked, window over
    await failTimes(svc, 1, "198.51.100.3"); // fresh
    await timePasses(svc, "198.51.100.1", 1000);
    await svc.db.sql`update login_failures set window_started_at = now() - interval '1000 seconds'
      where ip = '198.51.100.2'`;
    // A new instance cleans up on its first recorded attempt.
    assert.equal(await fail(createApp(svc.services), { ip: "198.51.100.4" }), 401);
    const rows = await svc.db.sql`select ip from login_failures order by ip`;
    assert.deepEqual(rows.map((r) => r.ip), ["198.51.100.2", "198.51.100.3", "198.51.100.4"]);
  });
});
