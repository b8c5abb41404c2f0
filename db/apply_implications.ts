/**
 * Applying a tag's implications to the images that already carry it, one bounded batch per
 * transaction (services/tags/implications.ts runs the batches as a job).
 */
import { MAX_TAGS_PER_IMAGE } from "../domain/tag_names.ts";
import { type Sql, transaction } from "./client.ts";
import { againIfImageVanished } from "./tag_rules.ts";
import { lockTagRulesShared } from "./tags.ts";

/** One batch of applying a tag's implications (see applyImplicationsBatch). */
export interface ApplyBatch {
  /** Images of the tag the batch read; fewer than asked means the tag is done. */
  images: number;
  /** Links added. */
  added: number;
  /** Images left out: their implied tags would take them past MAX_TAGS_PER_IMAGE. */
  skipped: number;
  /** Where the next batch starts (exclusive), or null when the tag is done. */
  next: string | null;
}

/**
 * Adds everything tag `id` implies (transitively) to up to `size` of its images, newest first,
 * before keyset position `before`, in one short transaction: the rules cannot change meanwhile, and
 * a tag write before or after it links the same tags (on conflict: nothing). An image whose tags
 * would pass MAX_TAGS_PER_IMAGE is left as it is, like a tag edit that would is refused.
 */
export function applyImplicationsBatch(
  sql: Sql,
  id: string,
  before: string | null,
  size: number,
): Promise<ApplyBatch> {
  return againIfImageVanished(() =>
    transaction(sql, async (tx) => {
      await lockTagRulesShared(tx);
      const [row] = await tx<{ images: number; added: number; skipped: number; last: string }[]>`
      with recursive implied(id) as (
        select implied_id from tag_implications where tag_id = ${id}
        union
        select ti.implied_id from tag_implications ti join implied c on ti.tag_id = c.id),
      batch as (
        select image_id, image_seq from image_tags
        where tag_id = ${id} and image_seq < (select ${before ?? "9223372036854775807"}::bigint)
        order by image_seq desc limit ${size}),
      missing as (
        select b.image_id, b.image_seq, c.id as tag_id from batch b cross join implied c
        where not exists (
          select 1 from image_tags x where x.image_id = b.image_id and x.tag_id = c.id)),
      per_image as (select image_id, count(*) as n from missing group by image_id),
      room as (
        select p.image_id from per_image p
        where (select count(*) from image_tags x where x.image_id = p.image_id) + p.n
            <= ${MAX_TAGS_PER_IMAGE}),
      fits as (select m.* from missing m join room r on r.image_id = m.image_id),
      added as (
        insert into image_tags (image_id, tag_id, image_seq)
        select image_id, tag_id, image_seq from fits order by tag_id
        on conflict do nothing returning 1)
      select (select count(*)::int from batch) as images,
        (select count(*)::int from added) as added,
        (select count(*)::int from per_image) - (select count(*)::int from room) as skipped,
        (select min(image_seq)::text from batch) as last`;
      return {
        images: row.images,
        added: row.added,
        skipped: row.skipped,
        next: row.images < size ? null : row.last,
      };
    })
  );
}
