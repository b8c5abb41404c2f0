/**
 * Near-duplicate detection (issue 22): the same meme recompressed, resized or re-encoded.
 *
 * - `phash.ts`: the 64-bit perceptual hashes (the stored one and the one it was measured
 *   against) and the Hamming distance.
 * - `adapters/thumbnails/pixels.ts`: hashes from decoded pixels, for the thumbnail worker (sharp).
 * - `similar_probes.ts`: the multi-index hashing probes that make the search exact and indexed.
 * - `services/similar/upload.ts`: the near-duplicates an upload's response lists.
 * - `services/similar/backfill.ts`: hashes for images that have none, as a durable job.
 *
 * The SQL is in db/similar.ts; the routes in api/similar.ts.
 */
export { hammingDistance } from "./phash.ts";
export { blockProbes, BLOCKS, MAX_DISTANCE } from "./similar_probes.ts";

/**
 * The distance under which two images count as near-duplicates: uploads list them, and the
 * duplicates view pairs them. Chosen on the corpus of bench/b11_similar_quality.ts (figures in
 * bench/RESULTS.md).
 */
export const DEFAULT_DISTANCE = 8;

/** Near-duplicates listed in an upload's response. */
export const UPLOAD_SIMILAR_LIMIT = 5;
