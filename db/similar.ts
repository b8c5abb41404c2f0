/**
 * Near-duplicate search over the perceptual hashes (migration 008), the pairs of the "possible
 * duplicates" view, and merging one image into another. The search is exact: multi-index hashing
 * (domain/similar_probes.ts) finds every candidate a full `bit_count` scan would, through the four
 * block indexes, and the full distance is checked on those candidates only.
 */
import type postgres from "postgres";
import { blockProbes } from "../domain/similar_probes.ts";
import { MAX_TAGS_PER_IMAGE, TooManyTagsError } from "../domain/tag_names.ts";
import type { Sql } from "./client.ts";
import { transaction } from "./client.ts";
import { COLUMNS, type ImageRow, type ImageWithTags, TAGS } from "./images.ts";
import { replaceWords } from "./caption_words.ts";
import { AppError } from "../domain/errors.ts";

type Tx = Sql | postgres.TransactionSql;

/** A near-duplicate found by a search, nearest first. */
export interface SimilarHit {
  id: string;
  short_id: string;
  distance: number;
}

/** Most pairs one image records for the duplicates view (its nearest). */
export const MAX_PAIRS_PER_IMAGE = 100;

/**
 * The query of a search: images (other than `excludeId`) within `distance` of `phash`, with
 * their distance, nearest first, then newest. Each block's probes are looked up in its own index,
 * which carries the hash, so candidates are checked there and only matches reach the table.
 */
function searchQuery(
  sql: Tx,
  phash: bigint,
  excludeId: string | null,
  distance: number,
  limit: number,
  /** Select the images' rows and tags (ImageWithTags) instead of their ID, short ID and seq. */
  rows = false,
) {
  const [b0, b1, b2, b3] = blockProbes(phash, distance);
  const h = phash.toString();
  const near =
    sql`i.phash is not null and bit_count((i.phash # ${h}::bigint)::bit(64)) <= ${distance}`;
  // `= any(array(...))`: the few matches are read by primary key. Joined instead, PostgreSQL
  // (which cannot estimate the distance filter) hashed the whole table (B11).
  return sql<(SimilarHit & { seq: string })[]>`
    select ${rows ? sql`${COLUMNS(sql)}, ${TAGS(sql)}` : sql`i.id, i.short_id, i.seq`},
      bit_count((i.phash # ${h}::bigint)::bit(64))::int as distance
    from images i
    where i.id = any(array(
      select i.id from images i where ((i.phash >> 48) & 65535) = any(${b0}::bigint[]) and ${near}
      union
      select i.id from images i where ((i.phash >> 32) & 65535) = any(${b1}::bigint[]) and ${near}
      union
      select i.id from images i where ((i.phash >> 16) & 65535) = any(${b2}::bigint[]) and ${near}
      union
      select i.id from images i where (i.phash & 65535) = any(${b3}::bigint[]) and ${near}
    ))
      and i.id is distinct from ${excludeId}::uuid
    order by distance, i.seq desc
    limit ${limit}`;
}

/** Images within `distance` of `phash` (never `excludeId`), nearest first. */
export function findSimilarByHash(
  sql: Tx,
  phash: bigint,
  opts: { excludeId?: string | null; distance: number; limit: number },
): Promise<SimilarHit[]> {
  return searchQuery(sql, phash, opts.excludeId ?? null, opts.distance, opts.limit)
    .then((rows) => rows.map(({ id, short_id, distance }) => ({ id, short_id, distance })));
}

/** The same search as a full scan of every hash: the reference the index is tested against. */
export function scanSimilarByHash(
  sql: Tx,
  phash: bigint,
  opts: { excludeId?: string | null; distance: number; limit: number },
): Promise<SimilarHit[]> {
  const h = phash.toString();
  return sql<SimilarHit[]>`
    select id, short_id, distance from (
      select i.id, i.short_id, i.seq, bit_count((i.phash # ${h}::bigint)::bit(64))::int as distance
      from images i where i.phash is not null and i.id is distinct from ${
    opts.excludeId ?? null
  }::uuid
    ) c
    where distance <= ${opts.distance}
    order by distance, seq desc
    limit ${opts.limit}`.then((rows) => [...rows]);
}

/** An image's ID and hash, or null when there is no such image. */
export async function getImageHash(
  sql: Tx,
  shortId: string,
): Promise<{ id: string; phash: bigint | null } | null> {
  const [row] = await sql<{ id: string; phash: string | null }[]>`
    select id, phash::text as phash from images where short_id = ${shortId}`;
  if (!row) return null;
  return { id: row.id, phash: row.phash === null ? null : BigInt(row.phash) };
}

/**
 * The images within `distance` of the image `shortId`, nearest first, with their tags; null
 * when there is no such image, empty when it has no hash yet.
 */
export async function listSimilarImages(
  sql: Sql,
  shortId: string,
  distance: number,
  limit: number,
): Promise<{ image: ImageWithTags; distance: number }[] | null> {
  const self = await getImageHash(sql, shortId);
  if (!self) return null;
  if (self.phash === null) return [];
  // The matches' rows and tags come with the search: one round trip.
  const rows = await searchQuery(sql, self.phash, self.id, distance, limit, true) as unknown as (
    ImageWithTags & { distance: number }
  )[];
  return rows.map(({ distance, ...image }) => ({ image, distance }));
}

/**
 * The images within `distance` of the hash `phash` (of an image that is not on the board), nearest
 * first, with their tags: search by image. One round trip.
 */
export async function listImagesNearHash(
  sql: Sql,
  phash: bigint,
  distance: number,
  limit: number,
): Promise<{ image: ImageWithTags; distance: number }[]> {
  const rows = await searchQuery(sql, phash, null, distance, limit, true) as unknown as (
    ImageWithTags & { distance: number }
  )[];
  return rows.map(({ distance, ...image }) => ({ image, distance }));
}

/**
 * Stores an image's hash (unless it has one) and records its pairs within `distance` for the
 * duplicates view; returns its nearest `limit` near-duplicates. One statement, run again if it
 * deadlocks: each pair locks its two images shared as it goes in (migration 015), so two images
 * hashed at once may each wait for the other's row.
 */
export async function recordImageHash(
  sql: Sql,
  shortId: string,
  phash: bigint,
  distance: number,
  limit: number,
): Promise<SimilarHit[]> {
  const h = phash.toString();
  const rows = await transaction(sql, (tx) =>
    tx<SimilarHit[]>`
    with hashed as (
      update images set phash = ${h}::bigint where short_id = ${shortId} and phash is null
      returning id, phash
    ), me as (
      -- An image that has a hash (an upload's, stored with the row) is not written, so not locked.
      select id, phash from hashed
      union all
      select id, phash from images where short_id = ${shortId} and phash is not null
    ), found as (
      select f.* from (${searchQuery(tx, phash, null, distance, MAX_PAIRS_PER_IMAGE + 1)}) f
      where f.id <> (select id from me)
    ), pairs as (
      insert into similar_pairs (a, b, distance)
      select least(me.id, f.id), greatest(me.id, f.id), f.distance from found f, me
      where me.phash = ${h}::bigint
      on conflict (a, b) do nothing
    )
    select id, short_id, distance from found order by distance, seq desc limit ${limit}`);
  return rows.map(({ id, short_id, distance }) => ({ id, short_id, distance }));
}

/** The nearest `limit` near-duplicates of image `shortId` within `distance` (empty without a hash). */
export async function nearestTo(
  sql: Sql,
  shortId: string,
  distance: number,
  limit: number,
): Promise<SimilarHit[]> {
  const self = await getImageHash(sql, shortId);
  if (!self || self.phash === null) return []; // 0n is a hash like any other
  return await findSimilarByHash(sql, self.phash, { excludeId: self.id, distance, limit });
}

/** A pair of the duplicates view. */
export interface SimilarPair {
  a: ImageWithTags;
  b: ImageWithTags;
  distance: number;
  shared_tags: number;
}

/**
 * Recorded pairs, most shared tags first, then nearest; `offset` pages through them. The order is
 * an index (migration 015) that the page walks and stops: offset + limit entries, whatever the
 * number of pairs (tests/pair_shared_tags_test.ts, bench B11).
 */
export async function listSimilarPairs(
  sql: Sql,
  limit: number,
  offset: number,
): Promise<SimilarPair[]> {
  const pairs = await sql<{ a: string; b: string; distance: number; shared_tags: number }[]>`
    select p.a, p.b, p.distance, p.shared_tags from similar_pairs p
    order by p.shared_tags desc, p.distance, p.a, p.b
    limit ${limit} offset ${offset}`;
  if (pairs.length === 0) return [];
  const ids = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const rows = await sql<ImageWithTags[]>`
    select ${COLUMNS(sql)}, ${TAGS(sql)} from images i where i.id = any(${ids}::uuid[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return pairs.filter((p) => byId.has(p.a) && byId.has(p.b)).map((p) => ({
    a: byId.get(p.a)!,
    b: byId.get(p.b)!,
    distance: p.distance,
    shared_tags: p.shared_tags,
  }));
}

/** Merging an image into itself (`self_merge`). */
export class SelfMergeError extends AppError {
  override name = "SelfMergeError";
  constructor(message: string) {
    super("self_merge", message);
  }
}

/**
 * Moves the tags of image `from` to image `into` (and its caption, if `into` has none) and deletes
 * `from`, recording its objects for deletion: one transaction, both rows locked in ID order.
 * Returns the keys to remove now, or null when either image does not exist. Throws TooManyTagsError
 * (nothing changes) when `into` would carry more than MAX_TAGS_PER_IMAGE tags.
 */
export function mergeImageInto(
  sql: Sql,
  from: string,
  into: string,
  keysOf: (row: ImageRow) => string[],
): Promise<string[] | null> {
  if (from === into) throw new SelfMergeError("An image cannot be merged into itself");
  return transaction(sql, async (tx) => {
    const locked = await tx<{ id: string; short_id: string; seq: string }[]>`
      select id, short_id, seq::text as seq from images where short_id in (${from}, ${into})
      order by id for update`;
    const source = locked.find((r) => r.short_id === from);
    const target = locked.find((r) => r.short_id === into);
    if (!source || !target) return null;
    await tx`
      insert into image_tags (image_id, tag_id, image_seq)
      select ${target.id}, it.tag_id, ${target.seq}::bigint from image_tags it
      where it.image_id = ${source.id}
      order by it.tag_id
      on conflict do nothing`;
    const [{ count }] = await tx<{ count: number }[]>`
      select count(*)::int as count from image_tags where image_id = ${target.id}`;
    if (count > MAX_TAGS_PER_IMAGE) {
      throw new TooManyTagsError(`An image carries at most ${MAX_TAGS_PER_IMAGE} tags`);
    }
    // The caption goes along when `into` has none (not recognised yet, or nothing found).
    const [moved] = await tx<{ text: string }[]>`
      update images t set text = s.text, text_source = s.text_source
      from images s where s.id = ${source.id} and t.id = ${target.id}
        and coalesce(t.text, '') = '' and coalesce(s.text, '') <> ''
      returning t.text`;
    if (moved) {
      await replaceWords(tx, target.id, moved.text);
    }
    const [row] = await tx<ImageRow[]>`
      delete from images i where i.id = ${source.id} returning ${COLUMNS(tx)}`;
    const keys = keysOf(row);
    await tx`insert into pending_deletes (key) select unnest(${keys}::text[])
             on conflict (key) do update set next_attempt_at = now()`;
    return keys;
  });
}
