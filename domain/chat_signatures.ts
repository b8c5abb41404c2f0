/**
 * How the chat platforms sign the requests they send to the board (issue 43), checked with
 * WebCrypto alone: Discord's Ed25519 signature over the timestamp and the raw body. Every check
 * runs before the body is parsed or anything is counted (api/chat.ts); a request older or newer
 * than MAX_SKEW_SECONDS is refused whatever its signature, so that a captured request cannot be
 * replayed later (tests/chat_discord_test.ts, "stale").
 */

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
  // (logged), never the start-up with an unhandled rejection.
  let key: Promise<CryptoKey> | null = null;
  /**
   * True when `signatureHex` (X-Signature-Ed25519) signs `timestamp` (X-Signature-Timestamp)
   * followed by `body`, the raw bytes as received, and the timestamp is fresh at `nowMs`.
   */
  return async (
    signatureHex: string,
    timestamp: string,
    body: Uint8Array,
    nowMs = Date.now(),
  ): Promise<boolean> => {
    if (!isFreshTimestamp(timestamp, nowMs)) return false;
    const signature = hexBytes(signatureHex);
    if (!signature || signature.length !== 64) return false;
    const stamp = new TextEncoder().encode(timestamp);
    const signed = new Uint8Array(stamp.length + body.length);
    signed.set(stamp);
    signed.set(body, stamp.length);
    key ??= crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
    return await crypto.subtle.verify({ name: "Ed25519" }, await key, signature, signed);
  };
}
