/**
 * How the chat platforms sign the requests they send to the board (issue 43), checked with
 * node:crypto: Discord's Ed25519 signature over the timestamp and the raw body,
 * Slack's HMAC-SHA256 of `v0:{timestamp}:{body}`, Telegram's secret token, each compared in
 * constant time. Every check runs before the body is parsed
 * or anything is counted (api/chat.ts); a request older or newer than MAX_SKEW_SECONDS is refused
 * whatever its signature, so that a captured request cannot be replayed later
 * (tests/chat_discord_test.ts, "stale").
 */
import {
  createHash,
  createHmac,
  createPublicKey,
  type KeyObject,
  timingSafeEqual,
  verify,
} from "node:crypto";

/**
 * True when `given` equals `expected`, in a time that says nothing about where they differ or how
 * long either is: their SHA-256 digests are compared with timingSafeEqual (Telegram's secret
 * token; the same way services/auth.ts compares a password).
 */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** How far a request's timestamp may be from now: five minutes, as the platforms advise. */
export const MAX_SKEW_SECONDS = 300;

/** True when `timestamp` (Unix seconds, as text) is within MAX_SKEW_SECONDS of `nowMs`. */
export function isFreshTimestamp(timestamp: string, nowMs = Date.now()): boolean {
  if (!/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(Number(timestamp) - nowMs / 1000) <= MAX_SKEW_SECONDS;
}

/** The bytes of a hex string, or null when it is not one (odd length or a non-hex digit). */
export function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** True when `hex` is a 32-byte Ed25519 public key written in hex (DISCORD_PUBLIC_KEY). */
export function isEd25519PublicKeyHex(hex: string): boolean {
  return hex.length === 64 && hexBytes(hex) !== null;
}

/** A verifier of Discord's signatures under one application's public key (hex). */
export function discordVerifier(publicKeyHex: string) {
  const raw = hexBytes(publicKeyHex);
  if (!raw || raw.length !== 32) throw new RangeError("an Ed25519 public key is 32 bytes of hex");
  // Imported at the first request, so that a key the platform would refuse fails a request
  // (logged), never the start-up. node:crypto's verify runs on the calling thread: WebCrypto's
  // took three times as long per request (bench B14, Discord rows; figures in the commit).
  let key: KeyObject | null = null;
  /**
   * True when `signatureHex` (X-Signature-Ed25519) signs `timestamp` (X-Signature-Timestamp)
   * followed by `body`, the raw bytes as received, and the timestamp is fresh at `nowMs`.
   */
  return (
    signatureHex: string,
    timestamp: string,
    body: Uint8Array,
    nowMs = Date.now(),
  ): boolean => {
    if (!isFreshTimestamp(timestamp, nowMs)) return false;
    const signature = hexBytes(signatureHex);
    if (!signature || signature.length !== 64) return false;
    const stamp = new TextEncoder().encode(timestamp);
    const signed = new Uint8Array(stamp.length + body.length);
    signed.set(stamp);
    signed.set(body, stamp.length);
    key ??= createPublicKey({
      key: {
        kty: "OKP",
        crv: "Ed25519",
        x: btoa(String.fromCharCode(...raw)).replaceAll("+", "-").replaceAll("/", "_")
          .replace(/=+$/, ""),
      },
      format: "jwk",
    });
    return verify(null, signed, key, signature);
  };
}

/**
 * True when `signature` (X-Slack-Signature, `v0=` and hex) is the HMAC-SHA256 under `secret` of
 * `v0:{timestamp}:{body}` (X-Slack-Request-Timestamp, the raw body), compared in constant time,
 * and the timestamp is fresh at `nowMs`.
 */
export function slackSignatureValid(
  secret: string,
  signature: string,
  timestamp: string,
  body: Uint8Array,
  nowMs = Date.now(),
): boolean {
  if (!isFreshTimestamp(timestamp, nowMs)) return false;
  const given = /^v0=([0-9a-f]{64})$/.exec(signature);
  if (!given) return false;
  const mac = createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest();
  return timingSafeEqual(mac, hexBytes(given[1])!);
}
