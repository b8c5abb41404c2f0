/**
 * SHA-256, hex: the content hash of an image (its `hash`, the key of deduplication) and the
 * payload hash of a signed S3 request. One helper for both, owned by neither.
 */
import { createHash } from "node:crypto";

/** SHA-256 of nothing: the payload hash of a request without a body. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/**
 * Hex SHA-256 of `data`, by node:crypto: several times faster than Web Crypto's digest on a CPU
 * with the SHA extensions, and no slower without them
 * (bench/RESULTS.md#notes-moved-from-code-comments).
 */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
