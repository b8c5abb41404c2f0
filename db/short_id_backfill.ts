/**
 * The SQL of the short-ID backfill between revisions 003 and 004 (services/backfill_short_ids.ts
 * copies the objects between these steps). Each image's short ID is first written to
 * `short_id_backfill` (the plan), so a rerun reuses it; the image row takes it, and the plan row
 * goes, in one transaction once its objects are copied.
 */
import { newShortId } from "../domain/short_id.ts";
import type { Sql } from "./client.ts";

/** Plans a short ID for each image of the next batch that has none and no plan yet. */
export async function planShortIdBatch(sql: Sql, batchSize: number): Promise<void> {
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

/** A planned image still without its short ID. */
export interface PlannedImage {
  image_id: string;
  short_id: string;
  thumbnail_key: string | null;
}

/** Up to `batchSize` planned images still without their short ID, in ID order. */
export function plannedImages(sql: Sql, batchSize: number): Promise<PlannedImage[]> {
  return sql<PlannedImage[]>`
    select b.image_id, b.short_id, i.thumbnail_key
    from short_id_backfill b join images i on i.id = b.image_id
    where i.short_id is null
    order by b.image_id limit ${batchSize}`;
}

/** Gives the image its planned short ID and new thumbnail key, and drops the plan row. */
export async function finishPlannedImage(
  sql: Sql,
  row: PlannedImage,
  thumbnailKey: string | null,
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`update images set short_id = ${row.short_id}, thumbnail_key = ${thumbnailKey}
             where id = ${row.image_id} and short_id is null`;
    await tx`delete from short_id_backfill where image_id = ${row.image_id}`;
  });
}
