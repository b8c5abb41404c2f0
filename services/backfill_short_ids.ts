/**
 * The short-ID backfill between revisions 003 and 004: gives every image without a short ID a
 * random one and copies its original and thumbnail from the UUID keys to the short-ID keys.
 *
 * Crash safety: each image's short ID is first written to `short_id_backfill` (the plan), so a
 * rerun reuses it and copies to the same keys; the image row is updated only after both copies
 * have succeeded, and the plan row is removed in that same transaction. Copies are idempotent,
 * so nothing is copied twice wrongly and nothing is lost. The UUID-keyed objects are left in
 * place (an operator may remove `images/{uuid}` once every replica runs this version).
 */
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { legacyKeys, originalKey, thumbnailKey } from "../domain/storage_keys.ts";
import { newShortId } from "../domain/short_id.ts";
import type { Sql } from "../db/client.ts";

/** Options of a backfill run; `afterImage` is a test hook to make a run die half-way. */
export interface BackfillOptions {
  batchSize?: number;
  afterImage?: (done: number) => void | Promise<void>;
}

/** Plans a short ID for each image of the next batch that has none and no plan yet. */
async function planBatch(sql: Sql, batchSize: number): Promise<void> {
  const rows = await sql<{ id: string }[]>`
    select i.id from images i
    where i.short_id is null
      and not exists (select 1 from short_id_backfill b where b.image_id = i.id)
    order by i.id limit ${batchSize}`;
  for (const { id } of rows) {
    for (let attempt = 0;; attempt++) {
      const shortId = newShortId();
      const inserted = await sql`
        insert into short_id_backfill (image_id, short_id)
        select ${id}, ${shortId}
        where not exists (select 1 from images where short_id = ${shortId})
        on conflict do nothing
        returning 1`;
      if (inserted.length === 1) break;
      const planned = await sql`select 1 from short_id_backfill where image_id = ${id}`;
      if (planned.length === 1 || attempt > 20) break; // planned by a concurrent run
    }
  }
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
    await planBatch(sql, batchSize);
    const batch = await sql<{ image_id: string; short_id: string; thumbnail_key: string | null }[]>`
      select b.image_id, b.short_id, i.thumbnail_key
      from short_id_backfill b join images i on i.id = b.image_id
      where i.short_id is null
      order by b.image_id limit ${batchSize}`;
    if (batch.length === 0) return done;
    for (const row of batch) {
      await store.copy(legacyKeys.original(row.image_id), originalKey(row.short_id));
      let newThumb: string | null = null;
      if (row.thumbnail_key !== null) {
        newThumb = thumbnailKey(row.short_id);
        await store.copy(row.thumbnail_key, newThumb);
      }
      await sql.begin(async (tx) => {
        await tx`update images set short_id = ${row.short_id}, thumbnail_key = ${newThumb}
                 where id = ${row.image_id} and short_id is null`;
        await tx`delete from short_id_backfill where image_id = ${row.image_id}`;
      });
      done++;
      await opts.afterImage?.(done);
    }
  }
}
