/** Checks of responses: the status with the body released, and safe types for image bytes. */
import assert from "node:assert/strict";

/** The status, after the body was read (so no resource is left open). */
export async function statusOf(res: Response | Promise<Response>): Promise<number> {
  const r = await res;
  await r.body?.cancel();
  return r.status;
}

/** Content types a byte route may ever answer with: the sniffed image types. */
export const IMAGE_TYPES = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
  "image/avif",
]);

/** Asserts a byte response is an image type (never HTML or SVG) with nosniff. */
export function assertSafeBytes(res: Response, label: string) {
  const type = (res.headers.get("content-type") ?? "").toLowerCase();
  assert.ok(!/html|svg|xml|javascript|text\//.test(type), `${label}: served as ${type}`);
  assert.ok(IMAGE_TYPES.has(type.split(";")[0].trim()), `${label}: unexpected type ${type}`);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${label}: no nosniff`);
}
