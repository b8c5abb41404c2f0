/**
 * The short-ID backfill between revisions 003 and 004: gives every image without a short ID a
 * random one and copies its original and thumbnail from the UUID keys to the short-ID keys.
 *
 * Crash safety: each image's short ID is first written to `short_id_backfill` (the plan), so a
 * rerun reuses it and copies to the same keys; the image row is updated only after both copies
 * have succeeded, and the plan row is removed in that same transaction. Copies are idempotent,
 * so nothing is copied twice wrongly and nothing is lost. The UUID-keyed objects are left in
 * place (an operator may remove `images/{uuid}` once every replica runs this version). The SQL
 * of the plan and of each image's update is db/short_id_backfill.ts.
 */
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { legacyKeys, originalKey, thumbnailKey } from "../domain/storage_keys.ts";
import type { Sql } from "../db/client.ts";
import { finishPlannedImage, plannedImages, planShortIdBatch } from "../db/short_id_backfill.ts";

/** Options of a backfill run; `afterImage` is a test hook to make a run die half-way. */
export interface BackfillOptions {
  batchSize?: number;
  afterImage?: (done: number) => void | Promise<void>;
}

/** Runs the backfill to completion; returns how many images it gave a short ID. */
export async function backfillShortIds(
  sql: Sql,
  store: ObjectStore,
  opts: BackfillOptions = {},
): Promise<number> {
  const batchSize = opts.batchSize ?? 100;
  let done = 0;
  for (;;) {
    await planShortIdBatch(sql, batchSize);
    const batch = await plannedImages(sql, batchSize);
    if (batch.length === 0) return done;
    for (const row of batch) {
      await store.copy(legacyKeys.original(row.image_id), originalKey(row.short_id));
      let newThumb: string | null = null;
      if (row.thumbnail_key !== null) {
        newThumb = thumbnailKey(row.short_id);
        await store.copy(row.thumbnail_key, newThumb);
      }
      await finishPlannedImage(sql, row, newThumb);
      done++;
      await opts.afterImage?.(done);
    }
  }
}
