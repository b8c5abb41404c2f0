/**
 * Images and their tag links. Getters return null when nothing is found; multi-statement
 * writes run in one transaction; tag counts follow from the image_tags triggers.
 */
import type postgres from "postgres";
import { MAX_TAGS_PER_IMAGE, TooManyTagsError } from "../domain/tag_names.ts";
import type { ImageDto } from "../domain/types.ts";
import type { Sql } from "./client.ts";
import { transaction } from "./client.ts";
import { forgetKeysOf } from "./pending_deletes.ts";
import { type CaptionSource, linkWordStatements } from "./caption_words.ts";
import {
  impliedClosure,
  lockTagRulesShared,
  meantTagIds,
  meantTagIdsOf,
  resolvedNames,
} from "./tags.ts";
import { type Piece, q, raw, Slot, StatementCache, viaSql } from "./template.ts";

/** An image row: the API's fields it stores, plus the UUID and keyset position kept inside. */
export interface ImageRow extends
  Omit<
    ImageDto,
    "tags" | "file_url" | "thumbnail_url" | "created_at" | "video_url" | "preview_url"
  > {
  id: string;
  seq: string;
  created_at: Date;
  /** The MP4 rendition's size once it is stored (migration 018), else null. */
  mp4_bytes: number | null;
  /** The animated preview's size once it is stored (migration 018), else null. */
  preview_bytes: number | null;
}

/** An image row with its tags, sorted by name. */
export interface ImageWithTags extends ImageRow {
  tags: { name: string; image_count: number }[];
}

/** The columns of an ImageRow, selected from `images i`. */
export const COLUMNS = (sql: Sql | postgres.TransactionSql) =>
  sql`i.id, i.seq::text as seq, i.short_id, i.hash, i.content_type, i.size_bytes::float8 as size_bytes,
      i.width, i.height, i.thumbnail_key, i.text, i.text_source, i.created_at,
      (select u.username from users u where u.id = i.uploaded_by) as uploaded_by,
      i.favorite_count, i.send_count, i.duration_seconds, i.mp4_bytes::float8 as mp4_bytes,
      i.preview_bytes::float8 as preview_bytes`;

/**
 * An image's tags as one JSON array sorted by name (postgres.js parses it): the row and its tags
 * in one round trip, from the tag IDs on the row (migration 010), one primary-key probe per tag.
 * Each tag's row as the object (its columns are the keys): `json_build_object` per tag took an
 * eighth more of PostgreSQL's time for a page's tags, most of a listing's own work besides
 * finding the page (bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const TAGS = (sql: Sql | postgres.TransactionSql) =>
  sql`coalesce((
    select json_agg(t order by t.name)
    from (select t.name, t.image_count from tags t where t.id = any(i.tag_ids)) t), '[]') as tags`;

/** The image with this short ID, or null. */
export async function getImageByShortId(sql: Sql, shortId: string): Promise<ImageWithTags | null> {
  const [row] = await sql<ImageWithTags[]>`
    select ${COLUMNS(sql)}, ${TAGS(sql)} from images i where i.short_id = ${shortId}`;
  return row ?? null;
}

/** The delivery fields of an image, without its tags (the byte routes need no more). */
export async function getImageForDelivery(sql: Sql, shortId: string) {
  const rows = await sql<
    Pick<
      ImageRow,
      "hash" | "content_type" | "size_bytes" | "thumbnail_key" | "mp4_bytes" | "preview_bytes"
    >[]
  >`
    select hash, content_type, size_bytes::float8 as size_bytes, thumbnail_key,
           mp4_bytes::float8 as mp4_bytes, preview_bytes::float8 as preview_bytes
    from images where short_id = ${shortId}`;
  return rows[0] ?? null;
}

/** The image with this content hash, or null. */
export async function getImageByHash(sql: Sql, hash: string): Promise<ImageWithTags | null> {
  const [row] = await sql<ImageWithTags[]>`
    select ${COLUMNS(sql)}, ${TAGS(sql)} from images i where i.hash = ${hash}`;
  return row ?? null;
}

/**
 * Up to this ratio between the second-rarest and the rarest tag's image counts, a page of a tag
 * intersection walks both tags in image order at once (a merge join); above it, it walks the
 * rarest tag and probes each of its images for the others. A merge reads both tags' entries in
 * order (each at most MAX_EXAMINED a page); a probe descends the index for each candidate. The
 * threshold is where the probe's page time at a million images overtook the merge's (B5; figures
 * in bench/RESULTS.md#notes-moved-from-code-comments). The caption search's merge of a word with a
 * tag has its own bound, measured on its own (WORD_TAG_MERGE_MAX_RATIO).
 */
export const TAG_MERGE_MAX_RATIO = 10;

/**
 * The most rows one page statement returns: the API's largest page (200) and one more, which
 * tells whether there is a next page.
 */
export const MAX_PAGE_ROWS = 201;

/** No keyset position: every image is before the largest bigint. */
const NO_CURSOR = "9223372036854775807";

/**
 * The most candidates one listing statement examines: images of the newest listing, or entries of
 * the walked tag (each merged tag's own, for two of similar size). A filter that few candidates
 * pass (an exclusion of a tag nearly every image carries, two large tags that rarely meet) ends its
 * page there, short or empty, with the position to resume from; without the bound a page walked the
 * whole table (`-imported`, bench/RESULTS.md#notes-moved-from-code-comments). The rows read a page
 * are thus at most this many candidates, one probe per filter tag each, and the page's own rows.
 */
export const MAX_EXAMINED = 10_000;

/**
 * A listing's rows, newest first, and where the next page starts when the statement stopped at
 * its bound of candidates (MAX_EXAMINED) before it had `limit` rows: the keyset position below
 * the last candidate examined. Null when it stopped for any other reason (enough rows, or none
 * left to walk).
 */
export type ListedImages = ImageWithTags[] & { resume: string | null };

/**
 * One page of images carrying all of `tags` and none of `exclude` (names or aliases, each meaning
 * its target), newest first, after keyset position `beforeSeq`, in one statement; an unknown tag
 * matches nothing, an unknown exclusion excludes nothing.
 *
 * Every plan is an index-only scan of image_tags (tag_id, image_seq) in order that stops at the
 * page. For several tags the statement ranks them by image count and holds both strategies, each
 * behind a one-time condition on that ranking, so the choice is made per request inside the
 * statement and PostgreSQL can keep one generic plan for it: two tags of similar size are merged
 * (t2 and t3 at a million images: 611 buffers instead of 2,367, bench/plans/two_tags.txt); a rare
 * tag with a popular one drives from the rare one and probes. Any further tags are probed. The
 * merge's exclusion probe names the image as both scans have it (`greatest` of two equal numbers),
 * so that it runs on the merge's rows: on the first tag's column alone PostgreSQL ran it on that
 * tag's scan, and its generic plan turned the merge into a probe per image of that tag (B5's
 * two-tag listings lost a fifth of their rate; bench/RESULTS.md#notes-moved-from-code-comments).
 * Fenced off in a sub-select instead, the join lost the page's limit and was planned as a hash join
 * of both tags on the tests' smaller database.
 *
 * There are three statements, one for no tag, one tag and several, whatever the request: nothing
 * a client chooses changes their text. postgres.js prepares each distinct text on each connection
 * and PostgreSQL keeps it for the connection's life; when the page size was written into the text
 * and each tag count had its own statement, 1,000 anonymous listings of distinct shapes grew the
 * the backends' memory many times what three statements do (bench/_statement_memory.ts).
 *
 * Each statement keeps its generic plan, so PostgreSQL does not plan every request afresh
 * (bench B5; tests/db_listing_test.ts).
 * That takes a plan whose cost does not depend on the parameters: each walk is limited by
 * constants (MAX_EXAMINED candidates, MAX_PAGE_ROWS matches), and the page size only limits the
 * rows taken from them (a bound `limit $n` alone is costed for a tenth of the table); the cursor
 * is read through a sub-select;
 * and the tags after the first two are checked through an array built once, whose length no plan
 * is costed for.
 *
 * Exclusions are one more bound array in each of the three statements, never a parameter per tag
 * (an array built once). With no tag or one, each candidate's own row is checked (its tag_ids,
 * read for the page anyway); with several, where the candidates are image_tags entries, each is
 * probed in image_tags (tag_id, image_seq) for the excluded IDs (an empty array's probe ends
 * before reading the index). The probe is a scalar sub-select, not `not exists`, which
 * PostgreSQL turns into a hash anti-join that reads every image of the excluded tags first,
 * where a page needs only a page's worth of probes (B5 `t2,-t1`). A one-time test that
 * skipped the probe with no exclusion made PostgreSQL plan every request afresh: the custom
 * plans, which fold the test away, were estimated cheaper than the generic one.
 */
export async function listImages(
  sql: Sql,
  opts: {
    tags: string[];
    exclude?: string[];
    limit: number;
    beforeSeq: string | null;
    /** The bound of candidates examined (MAX_EXAMINED; smaller in tests). */
    examine?: number;
  },
): Promise<ListedImages> {
  if (!Number.isInteger(opts.limit) || opts.limit < 1 || opts.limit > MAX_PAGE_ROWS) {
    throw new RangeError(`bad page size: ${opts.limit}`);
  }
  const examine = opts.examine ?? MAX_EXAMINED;
  if (!Number.isInteger(examine) || examine < 1) throw new RangeError(`bad bound: ${examine}`);
  const tags = [...new Set(opts.tags)];
  const shape = { tags: Math.min(tags.length, 2) as 0 | 1 | 2, examine };
  const rows = await LISTING_STATEMENTS.query<(ImageWithTags & { resume: string | null })[]>(
    sql,
    shape,
    {
      before: opts.beforeSeq ?? NO_CURSOR,
      limit: opts.limit,
      tags,
      exclude: [...new Set(opts.exclude ?? [])],
    },
  );
  // Every row carries the resume position; a page with no image is one row of it alone.
  const resume = rows[0]?.resume ?? null;
  // The rows keep their `resume` column: copying each without it (an object rest) took a seventh
  // of the service's CPU per listing once the rows had video's columns too (a --cpu-prof of B5's
  // cache-off mix). Readers take the fields they name (services/read_model.ts toImageDto).
  const images: ImageWithTags[] = rows.filter((r) => r.id !== null);
  return Object.assign(images, { resume });
}

/**
 * One page of the images account `uploaderId` uploaded, carrying all of `tags` and none of
 * `exclude`, newest first, before keyset position `beforeSeq` (`GET /images?uploader=`). It walks
 * images (uploaded_by, seq) and checks each image's own tag IDs, so it reads at most that
 * account's uploads.
 */
export async function listImagesByUploader(
  sql: Sql,
  opts: {
    uploaderId: string;
    tags: string[];
    exclude?: string[];
    limit: number;
    beforeSeq: string | null;
  },
): Promise<ImageWithTags[]> {
  const tags = [...new Set(opts.tags)];
  const exclude = [...new Set(opts.exclude ?? [])];
  return await sql<ImageWithTags[]>`
    with wanted as materialized (${meantTagIds(sql, tags)}),
    excluded as materialized (
      select array(select id from (${meantTagIds(sql, exclude)}) e where id is not null) as ids)
    select ${COLUMNS(sql)}, ${TAGS(sql)} from images i
    where i.uploaded_by = ${opts.uploaderId}
      and i.seq < ${opts.beforeSeq ?? NO_CURSOR}::bigint
      and not exists (select 1 from wanted where id is null)
      and i.tag_ids @> (select coalesce(array_agg(id), '{}') from wanted)::bigint[]
      and not (i.tag_ids && (select ids from excluded))
    order by i.seq desc limit ${opts.limit}`;
}

/**
 * A listing's statement: for no tag, one tag, or several (see listImages), and its bound of
 * candidates (a constant of the text).
 */
export interface ListingShape {
  tags: 0 | 1 | 2;
  examine: number;
}

/** The per-call values of a listing's statement. */
const L = {
  before: new Slot("before"),
  limit: new Slot("limit"),
  tags: new Slot("tags"),
  exclude: new Slot("exclude"),
} as const;

/**
 * The three listing statements' text, each built once (db/template.ts): postgres.js rebuilt their
 * fragments on every request; built once, a listing costs the client little more CPU than a
 * four-parameter `select` (bench/RESULTS.md#notes-moved-from-code-comments).
 */
const LISTING_STATEMENTS = new StatementCache<ListingShape, (typeof L)[keyof typeof L]["name"]>(
  listingStatement,
);

/**
 * The statement of a listing of this shape, built from the shape alone.
 *
 * Each candidate stream is a window of at most `examine` entries in image order (a constant
 * `limit` below the filters, which cannot be pushed under it), and the page (`page`, at most
 * MAX_PAGE_ROWS, read lazily up to the request's rows) is what passes the filters in it. When the
 * page has fewer rows than asked, `resume` scans the windows again, index-only, and is the lowest
 * position of the window that was cut (the highest of two merged windows' cuts): every candidate
 * at or above it was examined, so the next page starts there and none is seen twice
 * (tests/db_listing_test.ts 'a bounded walk').
 */
export function listingStatement({ tags: shape, examine }: ListingShape): Piece {
  const before = (column: Piece) => q`${column} < (select ${L.before}::bigint)`;
  const scan = raw(`limit ${MAX_PAGE_ROWS}`);
  const bound = raw(`limit ${examine}`);
  const bounded = raw(String(examine));
  // The excluded tags' IDs (aliases resolved), looked up once per statement (a CTE: inside the
  // per-row probe the lookup would be costed once per candidate, more for a bound array than for
  // a literal one, and PostgreSQL would plan every request afresh).
  const excluded = q`excluded as materialized (
    select array(select id from (${meantTagIdsOf(L.exclude)}) e where id is not null) as ids)`;
  // A tag both required and excluded matches nothing: a one-time condition ends the statement
  // before it walks, which would otherwise probe every image of the tag (B5 `t1,-t1`).
  const clash = (required: Piece) =>
    q`not exists (select 1 from (${required}) r where r.id = any((select ids from excluded)::bigint[]))`;
  // The candidate image `i` carries none of the excluded tags, read from its row's tag IDs: the
  // row is read for the page anyway, where a probe of image_tags per candidate cost a third of
  // a `t2,-t1` page's database time (pgbench at a million images: 6,300-7,000 pages a second
  // probed, 9,300-9,800 so).
  const carriesNone = q`not (i.tag_ids && (select ids from excluded))`;
  const without = (column: Piece) =>
    q`and (select 1 from image_tags x
      where x.tag_id = any((select ids from excluded)::bigint[]) and x.image_seq = ${column} limit 1) is null`;
  // A tag's window: its entries before the cursor, newest first, at most `examine`.
  const tagWindow = (tag: Piece) =>
    q`select d.image_seq from image_tags d
      where d.tag_id = ${tag} and ${before(q`d.image_seq`)} order by d.image_seq desc ${bound}`;
  // The lowest position of `window` (of `image_seq`) when it was cut at `examine` entries.
  const cut = (window: Piece) =>
    q`select min(image_seq) as seq from (${window}) w having count(*) = ${bounded}`;
  // The page's rows, as many as asked, each with `resume`, or one row of `resume` alone.
  const withResume = (runs: Piece, resume: Piece) =>
    q`select ${viaSql(COLUMNS)}, ${viaSql(TAGS)}, r.resume::text as resume
      from (select case when ${runs} and (select count(*) from (
          select 1 from page limit ${L.limit}) n) < (select ${L.limit}::int)
        then (${resume}) end as resume) r
      left join lateral (select * from page limit ${L.limit}) i on true
      order by i.seq desc`;
  if (shape === 0) {
    return q`
      with ${excluded},
      page as materialized (
        select i.* from (
          select * from images i where ${before(q`i.seq`)} order by i.seq desc ${bound}) i
        where ${carriesNone}
        order by i.seq desc ${scan})
      ${
      withResume(
        q`true`,
        cut(q`select seq as image_seq from images
               where ${before(q`seq`)} order by seq desc ${bound}`),
      )
    }`;
  }
  if (shape === 1) {
    const wanted = q`(select id from wanted)`;
    return q`
      with ${excluded}, wanted as materialized (${meantTagIdsOf(L.tags)}),
      page as materialized (
        select i.* from (${tagWindow(wanted)}) d join images i on i.seq = d.image_seq
        where ${carriesNone} and ${clash(q`select id from wanted`)}
        order by d.image_seq desc ${scan})
      ${withResume(clash(q`select id from wanted`), cut(tagWindow(wanted)))}`;
  }
  const ratio = raw(String(TAG_MERGE_MAX_RATIO));
  // The candidate `d` also carries every tag ranked after `rank`. The IDs come as one array (an
  // init plan, run once), so the plan is costed the same whatever the number of names.
  const carriesRankedAfter = (rank: 1 | 2, column: Piece) => {
    const k = raw(String(rank));
    return q`and not exists (
      select 1 from unnest((select array_agg(id) from ranked where k > ${k})) w(id)
      where not exists (
        select 1 from image_tags o where o.tag_id = w.id and o.image_seq = ${column}))`;
  };
  // The second-rarest tag; the rarest when two names mean one tag (an alias and its target).
  const second = (column: "id" | "image_count") =>
    q`coalesce((select ${raw(`"${column}"`)} from ranked where k = 2),
                 (select ${raw(`"${column}"`)} from ranked where k = 1))`;
  const rarest = q`(select id from ranked where k = 1)`;
  const merged = q`${
    second("image_count")
  } <= ${ratio} * (select image_count from ranked where k = 1)`;
  const probed = q`${
    second("image_count")
  } > ${ratio} * (select image_count from ranked where k = 1)`;
  const runs = q`not exists (select 1 from wanted where id is null)
      and ${clash(q`select id from ranked`)}`;
  // Images carrying both of the two rarest tags: each tag's window, merged in image order. The
  // probes of any further tags and of the exclusions run on what the merge finds.
  const both = q`select d.image_seq from (${tagWindow(rarest)}) d
      join (${tagWindow(second("id"))}) m on m.image_seq = d.image_seq where ${merged}`;
  return q`
    with ${excluded}, wanted as materialized (${meantTagIdsOf(L.tags)}),
    ranked as materialized (
      select id, image_count::bigint as image_count, -- bigint: the ratio times it cannot overflow
             row_number() over (order by image_count, id) as k
      from tags where id in (select id from wanted)),
    page as materialized (
      select i.* from (
        (select d.image_seq from (${both}) d
         where true ${carriesRankedAfter(2, q`d.image_seq`)} ${without(q`d.image_seq`)}
         order by d.image_seq desc ${scan})
        union all
        (select d.image_seq from (${tagWindow(rarest)}) d
         where ${probed} ${carriesRankedAfter(1, q`d.image_seq`)}
           ${without(q`d.image_seq`)}
         order by d.image_seq desc ${scan})
      ) hit join images i on i.seq = hit.image_seq
      where ${runs}
      order by hit.image_seq desc ${scan})
    ${
    withResume(
      runs,
      q`select max(seq) from (
          ${cut(tagWindow(rarest))}
          union all
          (${cut(tagWindow(second("id")))} and ${merged})) c`,
    )
  }`;
}

/** Fields of a new image. */
export interface NewImage {
  shortId: string;
  hash: string;
  contentType: string;
  sizeBytes: number;
  width: number;
  height: number;
  thumbnailKey: string | null;
  /** The perceptual hash (domain/similar.ts), null when the thumbnail worker could not make one. */
  phash?: bigint | null;
  /** A restored image's creation date; now when null. */
  createdAt?: Date | null;
  /** A restored image's caption; null: recognition will write it. */
  caption?: { text: string; source: CaptionSource } | null;
  /** The uploader's account ID; null: nobody known. */
  uploadedBy?: string | null;
  /** A video's length in seconds; null (or absent) for an image. */
  durationSeconds?: number | null;
}

/**
 * The statements that link `tagNames` to the image that `image` selects (as `i`): each name is
 * replaced by its alias target, missing tags are created, and everything they imply (transitively)
 * is linked too; existing links are kept. Run them in order, awaited one by one or pipelined: each
 * takes its own snapshot, so the links see a tag that a concurrent writer committed while the
 * first statement waited on it. The first takes the tag rules' lock shared, so no alias,
 * implication or merge changes the rules between them. Links go in by tag ID, the order in which
 * tag counts are locked, so concurrent writers cannot deadlock on them.
 */
function linkTagStatements(
  tx: postgres.TransactionSql,
  image: postgres.PendingQuery<postgres.Row[]>,
  tagNames: string[],
): postgres.PendingQuery<postgres.Row[]>[] {
  if (tagNames.length === 0) return [];
  return [
    lockTagRulesShared(tx),
    tx`insert into tags (name) select name from (${resolvedNames(tx, tagNames)}) r
      on conflict (name) do nothing`,
    tx`insert into image_tags (image_id, tag_id, image_seq)
      select i.id, c.id, i.seq from images i cross join (${impliedClosure(tx, tagNames)}) c
      where ${image}
      order by c.id
      on conflict do nothing`,
  ];
}

/**
 * Links `tagNames` to the image with this ID inside `tx` (existing links are kept), then throws
 * TooManyTagsError if the image now carries more than MAX_TAGS_PER_IMAGE, so that the whole
 * transaction rolls back: a request may add at most 50, but repeated adds, re-uploads or the tags
 * they imply must not grow an image's tags (and every listing of it) without bound. The caller
 * holds the image's row lock, so concurrent adds are counted one after the other, and took the tag
 * rules' lock before it (a rule change that merges links waits for that row's lock).
 */
async function linkTags(tx: postgres.TransactionSql, imageId: string, tagNames: string[]) {
  for (const statement of linkTagStatements(tx, tx`i.id = ${imageId}`, tagNames)) {
    await statement;
  }
  const [{ count }] = await tx<{ count: number }[]>`
    select count(*)::int as count from image_tags where image_id = ${imageId}`;
  if (count > MAX_TAGS_PER_IMAGE) throw tooManyTags();
}

const tooManyTags = () =>
  new TooManyTagsError(`An image carries at most ${MAX_TAGS_PER_IMAGE} tags`);

/**
 * Inserts a new image with its tags, unless one with the same hash exists, and returns it as
 * stored; null when the hash was taken (the caller adds the tags to the existing image).
 * `pendingKeys` leave pending_deletes in the same transaction, and only if the row went in.
 *
 * No statement needs another's result (each finds the new row by its short ID), so they all go out
 * in one round trip between BEGIN and COMMIT: postgres.js pipelines queries sent before their
 * replies. Awaited one by one, the six statements and a read after the commit were round trips
 * after the thumbnail, on the upload's critical path (bench B2;
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
export async function insertImage(
  sql: Sql,
  img: NewImage,
  tagNames: string[],
  pendingKeys: string[] = [],
): Promise<ImageWithTags | null> {
  const results = await transaction(sql, async (tx) => {
    const statements: postgres.PendingQuery<postgres.Row[]>[] = [
      tx`insert into images (short_id, hash, content_type, size_bytes, width, height, thumbnail_key,
                             created_at, phash, text, text_source, uploaded_by,
                             duration_seconds)
        values (${img.shortId}, ${img.hash}, ${img.contentType}, ${img.sizeBytes}, ${img.width},
                ${img.height}, ${img.thumbnailKey},
                coalesce(${img.createdAt ?? null}::timestamptz, now()),
                ${img.phash?.toString() ?? null}::bigint,
                ${img.caption?.text ?? null}, ${img.caption?.source ?? null},
                ${img.uploadedBy ?? null}::bigint,
                ${img.durationSeconds ?? null}::float8)
        on conflict (hash) do nothing`,
      ...linkTagStatements(tx, tx`i.short_id = ${img.shortId}`, tagNames),
      // Only the new row's words: a row of the same hash, already there, was not replaced.
      ...linkWordStatements(
        tx,
        tx`i.short_id = ${img.shortId} and i.hash = ${img.hash}`,
        img.caption?.text ?? "",
      ),
    ];
    if (pendingKeys.length > 0) statements.push(forgetKeysOf(tx, img.shortId, pendingKeys));
    statements.push(
      tx`select ${COLUMNS(tx)}, ${TAGS(tx)} from images i where i.short_id = ${img.shortId}`,
    );
    const results = await Promise.all(statements);
    // What the tags imply may take a new image past the cap: roll back, like a tag edit.
    const [row] = results.at(-1) as unknown as ImageWithTags[];
    if (row && row.tags.length > MAX_TAGS_PER_IMAGE) throw tooManyTags();
    return results;
  });
  const [row] = results.at(-1) as unknown as ImageWithTags[];
  return row ?? null;
}

/**
 * Changes an image's tags: `replace` sets the whole set; otherwise `add` then `remove`.
 * Returns false when the image does not exist (any more).
 */
export function updateImageTags(
  sql: Sql,
  shortId: string,
  change: { replace?: string[]; add?: string[]; remove?: string[] },
): Promise<boolean> {
  return transaction(sql, async (tx) => {
    // The rules' lock before the image's row lock, in every writer.
    await lockTagRulesShared(tx);
    const [image] = await tx<{ id: string }[]>`
      select id from images where short_id = ${shortId} for update`;
    if (!image) return false;
    const remove = change.remove ?? [];
    const add = (change.replace ?? change.add ?? []).filter((n) => !remove.includes(n));
    // A replace keeps the named tags and what they imply; removing a tag keeps what it implied.
    const gone = change.replace
      ? tx`tag_id not in (${impliedClosure(tx, change.replace)})`
      : tx`tag_id in (select id from tags where name in (${resolvedNames(tx, remove)}))`;
    if (change.replace || remove.length) {
      if (add.length) {
        // The unlink and the link each count their tags in ID order, but one after the other:
        // two edits that trade tags would take those count rows in opposite orders and deadlock.
        // Every row this edit will count is locked here first, in one statement, in ID order.
        await tx`select 1 from tags where id in (
            select tag_id from image_tags where image_id = ${image.id} and ${gone}
            union all
            select id from (${impliedClosure(tx, add)}) c where id not in (
              select tag_id from image_tags where image_id = ${image.id}))
          order by id for no key update`;
      }
      await tx`delete from image_tags where image_id = ${image.id} and ${gone}`;
    }
    await linkTags(tx, image.id, add);
    return true;
  });
}

/** Deletes an image and records its objects for deletion in the same transaction. */
export function deleteImage(sql: Sql, shortId: string, keysOf: (row: ImageRow) => string[]) {
  return transaction(sql, async (tx) => {
    const [row] = await tx<ImageRow[]>`
      delete from images i where i.short_id = ${shortId} returning ${COLUMNS(tx)}`;
    if (!row) return null;
    const keys = keysOf(row);
    await tx`insert into pending_deletes (key) select unnest(${keys}::text[])
             on conflict (key) do update set next_attempt_at = now()`;
    return keys;
  });
}

/**
 * Adds `tagNames` to the image with this content hash and returns it, or null when there is
 * none. The row is locked so that a concurrent delete either happens first (null) or after.
 */
export async function addTagsByHash(
  sql: Sql,
  hash: string,
  tagNames: string[],
): Promise<ImageWithTags | null> {
  // A new upload (the common case) needs one read, not a locking transaction.
  const [known] = await sql`select 1 from images where hash = ${hash}`;
  if (!known) return null;
  const found = await transaction(sql, async (tx) => {
    await lockTagRulesShared(tx); // before the row lock, as in every writer
    const [image] = await tx<{ id: string }[]>`
      select id from images where hash = ${hash} for update`;
    if (!image) return false;
    await linkTags(tx, image.id, tagNames);
    return true;
  });
  return found ? await getImageByHash(sql, hash) : null;
}
