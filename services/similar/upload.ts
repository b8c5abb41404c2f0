/** The near-duplicates an upload's response lists (`similar`), recording the new image's pairs. */
import type { Sql } from "../../db/client.ts";
import { nearestTo, recordImageHash } from "../../db/similar.ts";
import type { Logger } from "../../adapters/log.ts";
import { DEFAULT_DISTANCE, UPLOAD_SIMILAR_LIMIT } from "../../domain/similar.ts";

/** A near-duplicate as an upload's response shows it. */
export interface SimilarRef {
  short_id: string;
  distance: number;
}

/**
 * Up to UPLOAD_SIMILAR_LIMIT near-duplicates of the uploaded image at the default distance. A new
 * image's hash (`phash`, from its thumbnail) also records its pairs. Advisory: the image is
 * stored whatever this finds, so a failure is logged and answers an empty list.
 */
export async function similarForUpload(
  sql: Sql,
  shortId: string,
  phash: bigint | null,
  log: Logger,
): Promise<SimilarRef[]> {
  try {
    const hits = phash === null
      ? await nearestTo(sql, shortId, DEFAULT_DISTANCE, UPLOAD_SIMILAR_LIMIT)
      : await recordImageHash(sql, shortId, phash, DEFAULT_DISTANCE, UPLOAD_SIMILAR_LIMIT);
    return hits.map(({ short_id, distance }) => ({ short_id, distance }));
  } catch (err) {
    log.warn("near-duplicates not looked up for this upload", { short_id: shortId, err });
    return [];
  }
}
