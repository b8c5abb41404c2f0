import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { tokens } from "../tests/_harness/tokens.ts";
import { credentialsMatch, issueAccessToken, verifyAccessToken } from "./auth.ts";

const SECRET = "unit-test-secret-that-is-at-least-32-bytes";
const config = {
  ADMIN_USERNAME: "admin",
  ADMIN_PASSWORD: "s3cret password",
  JWT_SECRET: SECRET,
  ACCESS_TOKEN_TTL_SECONDS: 600,
};

Deno.test("credentialsMatch() accepts only the configured username and password", () => {
  assert.equal(credentialsMatch(config, "admin", "s3cret password"), true);
  assert.equal(credentialsMatch(config, "admin", "s3cret passwor"), false);
  assert.equal(credentialsMatch(config, "admin", "s3cret password "), false);
  assert.equal(credentialsMatch(config, "Admin", "s3cret password"), false);
  assert.equal(credentialsMatch(config, "root", "wrong"), false);
  assert.equal(credentialsMatch(config, "admin", "x".repeat(100_000)), false);
  assert.equal(credentialsMatch(config, "", ""), false);
});

Deno.test("credentialsMatch() matches nothing when no password is configured", () => {
  const none = { ADMIN_USERNAME: "admin", ADMIN_PASSWORD: undefined };
  assert.equal(credentialsMatch(none, "admin", ""), false);
  assert.equal(credentialsMatch(none, "admin", "undefined"), false);
});

Deno.test("issueAccessToken() makes an HS256 JWT with sub, iat and exp", async () => {
  const now = Date.now();
  const token = await issueAccessToken(config, "admin", now);
  assert.equal(token.token_type, "bearer");
  assert.equal(token.expires_in, 600);
  assert.equal(decodeProtectedHeader(token.access_token).alg, "HS256");
  const claims = decodeJwt(token.access_token);
  assert.equal(claims.sub, "admin");
  assert.equal(claims.iat, Math.floor(now / 1000));
  assert.equal(claims.exp, Math.floor(now / 1000) + 600);
  assert.equal(await verifyAccessToken(config, token.access_token), "admin");
});

Deno.test("verifyAccessToken() refuses tampered, unsigned, HS512, foreign and expired tokens", async () => {
  const { valid, refused } = await tokens(SECRET);
  assert.equal(await verifyAccessToken(config, valid), "admin");
  for (const [name, token] of Object.entries(refused)) {
    assert.equal(await verifyAccessToken(config, token), null, name);
  }
});

Deno.test("verifyAccessToken() refuses everything when no JWT_SECRET is configured", async () => {
  const { valid } = await tokens(SECRET);
  assert.equal(await verifyAccessToken({ JWT_SECRET: undefined }, valid), null);
});

Deno.test("verifyAccessToken() refuses a token whose lifetime has just ended", async () => {
  const issued = await issueAccessToken(config, "admin", Date.now() - 601_000);
  assert.equal(await verifyAccessToken(config, issued.access_token), null);
});
