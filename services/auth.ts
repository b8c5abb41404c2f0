/**
 * Credentials and access tokens: the constant-time check of the one configured credential, and
 * HS256 JWTs (claims `sub`, `iat`, `exp`) issued and verified with `jose`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { Config } from "../adapters/config.ts";

/** The token response of `POST /auth/token` (OAuth2 password flow field names). */
export interface AccessToken {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
}

/** Raised when tokens are needed but no JWT_SECRET is configured. */
export class AuthNotConfiguredError extends Error {
  override name = "AuthNotConfiguredError";
}

const ALGORITHM = "HS256";
const encoder = new TextEncoder();
const sha256 = (s: string) => createHash("sha256").update(encoder.encode(s)).digest();
// Compared against when no password is configured, so the work done is the same.
const NO_PASSWORD = sha256(crypto.randomUUID());

/**
 * True when `username` and `password` are the configured credential. Both fields are always
 * compared, as SHA-256 digests with `timingSafeEqual`, so the time taken says nothing about
 * which field was wrong or how long either is. No configured password matches nothing.
 */
export function credentialsMatch(
  config: Pick<Config, "ADMIN_USERNAME" | "ADMIN_PASSWORD">,
  username: string,
  password: string,
): boolean {
  const expectedPassword = config.ADMIN_PASSWORD === undefined
    ? NO_PASSWORD
    : sha256(config.ADMIN_PASSWORD);
  const userOk = timingSafeEqual(sha256(username), sha256(config.ADMIN_USERNAME));
  const passOk = timingSafeEqual(sha256(password), expectedPassword);
  const configured = config.ADMIN_PASSWORD !== undefined;
  // Bitwise, not &&: no early exit.
  return (Number(userOk) & Number(passOk) & Number(configured)) === 1;
}

function secretKey(secret: string | undefined): Uint8Array {
  if (!secret) throw new AuthNotConfiguredError("JWT_SECRET is not configured");
  return encoder.encode(secret);
}

/**
 * Issues an HS256 access token for `sub`, valid for ACCESS_TOKEN_TTL_SECONDS from `now` (ms).
 * `gen` is the account's token generation (services/accounts.ts): a token whose generation is
 * behind the account's is refused, and a token without one counts as generation 0.
 */
export async function issueAccessToken(
  config: Pick<Config, "JWT_SECRET" | "ACCESS_TOKEN_TTL_SECONDS">,
  sub: string,
  now: number = Date.now(),
  gen = 0,
): Promise<AccessToken> {
  const iat = Math.floor(now / 1000);
  const ttl = config.ACCESS_TOKEN_TTL_SECONDS;
  const token = await new SignJWT(gen ? { gen } : {})
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttl)
    .sign(secretKey(config.JWT_SECRET));
  return { access_token: token, token_type: "bearer", expires_in: ttl };
}

/**
 * The subject of a valid access token, or null for anything else: another algorithm (HS256
 * only, so `none` and HS512 are refused), a bad signature, an expired token, or a token
 * without `sub`, `iat` or `exp`. Also null when no JWT_SECRET is configured.
 */
export async function verifyAccessToken(
  config: Pick<Config, "JWT_SECRET">,
  token: string,
): Promise<string | null> {
  return (await verifyAccessTokenClaims(config, token))?.sub ?? null;
}

/**
 * The subject and token generation of a valid access token (as verifyAccessToken checks it), or
 * null. A token without `gen` (every token issued before accounts) is generation 0; a `gen`
 * that is not a non-negative integer makes the token invalid.
 */
export async function verifyAccessTokenClaims(
  config: Pick<Config, "JWT_SECRET">,
  token: string,
): Promise<{ sub: string; gen: number } | null> {
  if (!config.JWT_SECRET) return null;
  try {
    const { payload } = await jwtVerify(token, secretKey(config.JWT_SECRET), {
      algorithms: [ALGORITHM],
      requiredClaims: ["sub", "iat", "exp"],
    });
    const gen = payload.gen ?? 0;
    if (typeof gen !== "number" || !Number.isSafeInteger(gen) || gen < 0) return null;
    return typeof payload.sub === "string" && payload.sub !== "" ? { sub: payload.sub, gen } : null;
  } catch {
    return null;
  }
}
