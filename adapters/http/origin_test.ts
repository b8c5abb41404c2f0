import assert from "node:assert/strict";
import { parseCidrList } from "../http/mod.ts";
import { resolveOrigin } from "./origin.ts";

const trustedProxies = parseCidrList("10.0.0.0/8, fd00::/8");
const h = (init: Record<string, string> = {}) => new Headers(init);
const FORWARDED = { "x-forwarded-proto": "https", "x-forwarded-host": "reactions.example.com" };

Deno.test("resolveOrigin() prefers PUBLIC_BASE_URL over everything the request says", () => {
  const settings = { publicBaseUrl: "https://pub.example", trustedProxies };
  assert.equal(
    resolveOrigin("http://internal:8000/i/x", h(FORWARDED), "10.1.2.3", settings),
    "https://pub.example",
  );
});

Deno.test("resolveOrigin() takes the request's own origin from an untrusted or unknown peer", () => {
  for (const peer of ["203.0.113.9", null, "not an ip"]) {
    assert.equal(
      resolveOrigin("http://board.test:8000/i/x", h(FORWARDED), peer, { trustedProxies }),
      "http://board.test:8000",
      String(peer),
    );
  }
});

Deno.test("resolveOrigin() believes a trusted proxy's X-Forwarded-Host only with TRUST_FORWARDED_HOST", () => {
  for (const trustForwardedHost of [undefined, false]) {
    assert.equal(
      resolveOrigin("http://10.0.0.5:8000/", h(FORWARDED), "10.0.0.1", {
        trustedProxies,
        trustForwardedHost,
      }),
      "https://10.0.0.5:8000",
      "the scheme forwarded, the host not",
    );
  }
});

Deno.test("resolveOrigin() believes a trusted proxy's X-Forwarded-Proto and -Host (first entry)", () => {
  const settings = { trustedProxies, trustForwardedHost: true };
  assert.equal(
    resolveOrigin("http://10.0.0.5:8000/", h(FORWARDED), "10.0.0.1", settings),
    "https://reactions.example.com",
  );
  assert.equal(
    resolveOrigin("http://10.0.0.5:8000/", h(FORWARDED), "::ffff:10.0.0.1", settings),
    "https://reactions.example.com",
    "an IPv4-mapped peer",
  );
  assert.equal(
    resolveOrigin(
      "http://a/",
      h({ "x-forwarded-proto": "https, http", "x-forwarded-host": "Pub.Example:443, a" }),
      "fd00::1",
      settings,
    ),
    "https://pub.example",
    "the first entries; a default port dropped",
  );
  assert.equal(
    resolveOrigin("http://a:8000/", h({ "x-forwarded-proto": "https" }), "10.0.0.1", settings),
    "https://a:8000",
    "only the scheme forwarded",
  );
});

Deno.test("resolveOrigin() ignores invalid forwarded values one by one", () => {
  const settings = { trustedProxies, trustForwardedHost: true };
  const cases: [Record<string, string>, string][] = [
    [{ "x-forwarded-proto": "javascript", "x-forwarded-host": "ok.example" }, "http://ok.example"],
    [{ "x-forwarded-proto": "https", "x-forwarded-host": "evil.example/path" }, "https://a:8000"],
    [{ "x-forwarded-host": "a b" }, "http://a:8000"],
    [{ "x-forwarded-host": 'x"><script>' }, "http://a:8000"],
    [{ "x-forwarded-host": "user@evil.example" }, "http://a:8000"],
    [{ "x-forwarded-host": "[::1]:8443" }, "http://[::1]:8443"],
  ];
  for (const [headers, want] of cases) {
    assert.equal(
      resolveOrigin("http://a:8000/", h(headers), "10.0.0.1", settings),
      want,
      JSON.stringify(headers),
    );
  }
});
