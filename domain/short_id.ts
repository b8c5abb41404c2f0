/** Short IDs: 8 characters of base62 drawn from a cryptographic random source. */

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Length of every short ID (SPEC: 8 characters, base62). */
export const SHORT_ID_LENGTH = 8;

const SHORT_ID_RE = /^[0-9A-Za-z]{8}$/;

/** A fresh random short ID; rejection sampling keeps the 62 symbols equally likely. */
export function newShortId(): string {
  let out = "";
  const buf = new Uint8Array(16);
  while (out.length < SHORT_ID_LENGTH) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      if (b < 248 && out.length < SHORT_ID_LENGTH) out += ALPHABET[b % 62]; // 248 = 4 * 62
    }
  }
  return out;
}

/** True when `s` has the shape of a short ID (anything else is a 404 without a query). */
export function isShortId(s: string): boolean {
  return SHORT_ID_RE.test(s);
}
