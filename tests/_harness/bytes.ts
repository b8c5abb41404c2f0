/** Bytes for hand-made requests and files: UTF-8 text and joins. */

const enc = new TextEncoder();

/** UTF-8 bytes of `s`. */
export function te(s: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(enc.encode(s));
}

/** Joins byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
