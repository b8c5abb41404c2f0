import assert from "node:assert/strict";
import {
  clientFromForwardedFor,
  limiterKey,
  parseForwardedAddress,
  resolveClientIp,
  throttle,
} from "./client_ip.ts";
import { formatIp, parseCidrList } from "./ip.ts";

const TRUSTED = parseCidrList("10.0.0.0/8, 192.168.1.5, 2001:db8:1::/48");
const PROXY = "10.1.2.3";

function headers(init: Record<string, string | string[]> = {}): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(init)) for (const one of [v].flat()) h.append(k, one);
  return h;
}

const resolve = (peer: string | null, init?: Record<string, string | string[]>) =>
  resolveClientIp(peer, headers(init), TRUSTED);

Deno.test("resolveClientIp() uses an untrusted peer and ignores both forwarding headers", () => {
  const got = resolve("203.0.113.7", {
    "x-real-ip": "198.51.100.1",
    "x-forwarded-for": "198.51.100.2",
  });
  assert.deepEqual(got, { ip: "203.0.113.7", source: "peer" });
});

Deno.test("resolveClientIp() trusts nobody with an empty trusted list", () => {
  const got = resolveClientIp(PROXY, headers({ "x-real-ip": "198.51.100.1" }), []);
  assert.deepEqual(got, { ip: PROXY, source: "peer" });
});

Deno.test("resolveClientIp() counts an IPv4-mapped IPv6 peer as its IPv4 address", () => {
  assert.deepEqual(resolve("::ffff:203.0.113.7"), { ip: "203.0.113.7", source: "peer" });
  // ...also when deciding whether the peer is trusted.
  assert.deepEqual(resolve("::ffff:10.1.2.3", { "x-real-ip": "198.51.100.1" }), {
    ip: "198.51.100.1",
    source: "x-real-ip",
  });
});

Deno.test("resolveClientIp() canonicalises an IPv6 peer", () => {
  assert.deepEqual(resolve("2001:DB8:0:0::0:1"), { ip: "2001:db8::1", source: "peer" });
});

Deno.test("resolveClientIp() gives 'unknown' without a usable peer address", () => {
  for (const peer of [null, "", "not-an-ip", "/run/app.sock"]) {
    assert.deepEqual(resolve(peer, { "x-real-ip": "198.51.100.1" }), {
      ip: "unknown",
      source: "unknown",
    });
  }
});

Deno.test("resolveClientIp() prefers a valid X-Real-IP from a trusted peer", () => {
  const got = resolve(PROXY, { "x-real-ip": " 198.51.100.1 ", "x-forwarded-for": "198.51.100.2" });
  assert.deepEqual(got, { ip: "198.51.100.1", source: "x-real-ip" });
  assert.deepEqual(resolve(PROXY, { "x-real-ip": "::ffff:198.51.100.9" }).ip, "198.51.100.9");
  assert.deepEqual(resolve("192.168.1.5", { "x-real-ip": "2001:db8:9::1" }).ip, "2001:db8:9::1");
  assert.deepEqual(resolve("2001:db8:1::7", { "x-real-ip": "198.51.100.1" }).ip, "198.51.100.1");
});

Deno.test("resolveClientIp() ignores an invalid X-Real-IP and falls back to X-Forwarded-For", () => {
  for (const bad of ["nonsense", "198.51.100.1, 198.51.100.2", "999.1.1.1", ""]) {
    const got = resolve(PROXY, { "x-real-ip": bad, "x-forwarded-for": "198.51.100.2" });
    assert.deepEqual(got, { ip: "198.51.100.2", source: "x-forwarded-for" }, bad);
  }
});

Deno.test("resolveClientIp() uses the peer when a trusted peer sends no usable header", () => {
  assert.deepEqual(resolve(PROXY), { ip: PROXY, source: "peer" });
  assert.deepEqual(resolve(PROXY, { "x-forwarded-for": "junk" }), { ip: PROXY, source: "peer" });
  assert.deepEqual(resolve(PROXY, { "x-forwarded-for": "1.2.3.4, junk" }), {
    ip: PROXY,
    source: "peer",
  });
});

Deno.test("resolveClientIp() takes the first entry of an honest X-Forwarded-For chain", () => {
  const got = resolve(PROXY, { "x-forwarded-for": "198.51.100.7, 10.9.9.9, 192.168.1.5" });
  assert.deepEqual(got, { ip: "198.51.100.7", source: "x-forwarded-for" });
});

Deno.test("resolveClientIp() ignores a forged X-Forwarded-For prefix", () => {
  // The client sent "X-Forwarded-For: 198.51.100.66"; the proxy appended the real address.
  const got = resolve(PROXY, { "x-forwarded-for": "198.51.100.66, 203.0.113.7" });
  assert.deepEqual(got, { ip: "203.0.113.7", source: "x-forwarded-for" });
  // Forged trusted-looking entries to the left of the real client change nothing either.
  const again = resolve(PROXY, { "x-forwarded-for": "10.0.0.1, 198.51.100.66, 203.0.113.7" });
  assert.equal(again.ip, "203.0.113.7");
});

Deno.test("resolveClientIp() takes the leftmost entry when every entry is trusted", () => {
  const got = resolve(PROXY, { "x-forwarded-for": "10.0.0.1, 10.0.0.2" });
  assert.deepEqual(got, { ip: "10.0.0.1", source: "x-forwarded-for" });
});

Deno.test("resolveClientIp() reads several X-Forwarded-For lines as one list", () => {
  const got = resolve(PROXY, { "x-forwarded-for": ["198.51.100.66", "203.0.113.7, 10.0.0.2"] });
  assert.equal(got.ip, "203.0.113.7");
});

Deno.test("resolveClientIp() counts IPv4-mapped entries of X-Forwarded-For as IPv4", () => {
  // A mapped trusted proxy is skipped; a mapped client is reported as IPv4.
  const got = resolve(PROXY, { "x-forwarded-for": "::ffff:203.0.113.7, ::ffff:10.0.0.2" });
  assert.deepEqual(got, { ip: "203.0.113.7", source: "x-forwarded-for" });
});

Deno.test("clientFromForwardedFor() stops at an invalid entry (nothing left of it is trusted)", () => {
  const ip = (h: string) => {
    const got = clientFromForwardedFor(h, TRUSTED);
    return got && formatIp(got);
  };
  assert.equal(ip("198.51.100.66, garbage, 10.0.0.2"), "10.0.0.2");
  assert.equal(ip("198.51.100.66, 203.0.113.7, unknown"), null);
  assert.equal(ip("garbage, 203.0.113.7"), "203.0.113.7");
  assert.equal(ip(""), null);
  assert.equal(ip(" , "), null);
});

Deno.test("parseForwardedAddress() accepts ports and brackets and refuses junk", () => {
  const text = (s: string) => {
    const b = parseForwardedAddress(s);
    return b && formatIp(b);
  };
  assert.equal(text("203.0.113.7"), "203.0.113.7");
  assert.equal(text(" 203.0.113.7:8443 "), "203.0.113.7");
  assert.equal(text("[2001:db8::1]:443"), "2001:db8::1");
  assert.equal(text("[2001:db8::1]"), "2001:db8::1");
  assert.equal(text("2001:db8::1"), "2001:db8::1");
  for (const bad of ["", "unknown", "203.0.113.7:", "203.0.113.7:99999x", "[::1", "1.2.3"]) {
    assert.equal(text(bad), null, bad);
  }
});

Deno.test("throttle() opens at most once per interval", () => {
  let now = 1_000;
  const gate = throttle(60_000, () => now);
  assert.equal(gate(), true);
  assert.equal(gate(), false);
  now += 59_999;
  assert.equal(gate(), false);
  now += 1;
  assert.equal(gate(), true);
  assert.equal(gate(), false);
});

Deno.test("resolveClientIp() in x-forwarded-for mode never reads X-Real-IP", () => {
  const init = { "x-real-ip": "198.51.100.1", "x-forwarded-for": "198.51.100.1, 203.0.113.5" };
  assert.deepEqual(resolveClientIp(PROXY, headers(init), TRUSTED, "x-forwarded-for"), {
    ip: "203.0.113.5",
    source: "x-forwarded-for",
  });
  // X-Real-IP alone is not an answer: the proxy's own address is.
  assert.deepEqual(
    resolveClientIp(PROXY, headers({ "x-real-ip": "198.51.100.1" }), TRUSTED, "x-forwarded-for"),
    { ip: PROXY, source: "peer" },
  );
  assert.deepEqual(resolveClientIp(PROXY, headers(init), TRUSTED, "x-real-ip").ip, "198.51.100.1");
});

Deno.test("limiterKey() keeps IPv4 and counts IPv6 by its /64", () => {
  assert.equal(limiterKey("203.0.113.7"), "203.0.113.7");
  assert.equal(limiterKey("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  assert.equal(limiterKey("2001:db8::1"), "2001:db8::/64");
  assert.equal(limiterKey("::1"), "::/64");
  assert.equal(limiterKey("fe80::1:2:3:4"), "fe80::/64");
  assert.equal(limiterKey("unknown"), "unknown");
});
