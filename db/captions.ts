/**
 * Caption text (migration 009): storing an image's text with its words, and finding images by
 * the words printed on them, exactly or approximately (trigram similarity, so that a recognition
 * slip like "FACEPRALM" is still found by "facepalm").
 */
import type postgres from "postgres";
import type { Sql } from "./client.ts";
import { transaction } from "./client.ts";
import { COLUMNS, type ImageWithTags, MAX_PAGE_ROWS, TAGS } from "./images.ts";
import { replaceWords } from "./caption_words.ts";

export type { TextSource } from "./caption_words.ts";
import type { TextSource } from "./caption_words.ts";

/**
 * Sets the caption of the image with this short ID and its words, in one transaction. Recognition
 * (`source` "ocr") leaves a person's text alone. Returns false when nothing was written (no such
 * image, or a person's text kept).
 */
export async function setImageText(
  sql: Sql,
  shortId: string,
  text: string,
  source: TextSource,
): Promise<boolean> {
  return await transaction(sql, async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      update images set text = ${text}, text_source = ${source}
      where short_id = ${shortId} and (${source} = 'manual' or text_source is distinct from 'manual')
      returning id`;
    if (!row) return false;
    await replaceWords(tx, tx`image_id = ${row.id}`, tx`i.id = ${row.id}`, text);
    return true;
  });
}

/**
 * Clears a person's caption so that recognition writes it again; returns false when the image
 * does not exist.
 */
export async function clearImageText(sql: Sql, shortId: string): Promise<boolean> {
  return await transaction(sql, async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      update images set text = null, text_source = null where short_id = ${shortId}
      returning id`;
    if (!row) return false;
    await replaceWords(tx, tx`image_id = ${row.id}`, tx`i.id = ${row.id}`, "");
    return true;
  });
}

/** How well a result matched: every word exactly, or some approximately. */
export type MatchLevel = 2 | 1;

/** An image found by its caption, with how well it matched. */
export interface TextHit extends ImageWithTags {
  level: MatchLevel;
}

/** Where a page of a caption search starts: after this level and `seq`. */
export interface TextCursor {
  level: MatchLevel;
  seq: string;
}

/**
 * Most dictionary words one query word may match approximately (the nearest first). A word of a
 * caption slips in few ways; more would only add noise and probes.
 */
export const MAX_CANDIDATES_PER_WORD = 20;

/**
 * Trigram similarity at or above which a dictionary word matches a query word approximately.
 * "facepralm" is 0.58 from "facepalm" (bench/text_quality.ts has the figures behind the choice).
 */
export const SIMILARITY_THRESHOLD = 0.5;

const NO_SEQ = "9223372036854775807";

/**
 * One page of images whose captions carry every word of `words` (from queryWords()), carrying all
 * of `tags` and none of `exclude` (tag names, aliases already resolved): first the images where
 * every word matches exactly, then those where some match only approximately, each newest first.
 *
 * Each query word is looked up in the dictionary of caption words, exactly and by trigram
 * similarity (at most MAX_CANDIDATES_PER_WORD words). Each level is one walk in image order that
 * stops at the page, from the rarer of the two drivers: the words (their images, in
 * image_words (word_id, image_seq)) or the rarest tag (image_tags), with every other condition
 * probed per candidate, as the tag listings do (db/images.ts). The approximate level is only
 * walked when the exact one did not fill the page.
 */
export async function searchImagesByText(
  sql: Sql,
  opts: {
    words: string[];
    tags: string[];
    exclude: string[];
    limit: number;
    after: TextCursor | null;
  },
): Promise<TextHit[]> {
  if (!opts.words.length || opts.limit < 1 || opts.limit > MAX_PAGE_ROWS) {
    throw new RangeError("a text search needs words and a page size");
  }
  const scan = sql.unsafe(`limit ${MAX_PAGE_ROWS}`);
  const { after } = opts;
  // Level 2 rows come before level 1 rows: after a level 1 cursor there is no level 2 left.
  const before2 = !after ? NO_SEQ : after.level === 2 ? after.seq : "0";
  const before1 = after?.level === 1 ? after.seq : NO_SEQ;
  const tagged = (s: postgres.PendingQuery<postgres.Row[]>) =>
    sql`not exists (select 1 from unnest((select ids from tagset)) t(id)
      where not exists (select 1 from image_tags o where o.tag_id = t.id and o.image_seq = ${s}))
    and (select 1 from image_tags x
      where x.tag_id = any((select ids from excluded)::bigint[]) and x.image_seq = ${s} limit 1) is null`;
  const everyWord = (s: postgres.PendingQuery<postgres.Row[]>, exact: boolean) =>
    sql`not exists (select 1 from per_word p where not exists (
      select 1 from image_words o where o.image_seq = ${s}
        and o.word_id = any(${exact ? sql`p.exact_ids` : sql`p.ids`})))`;
  const d = sql`d.image_seq`;
  return await sql<TextHit[]>`
    with cand as materialized (
      select q.k, c.id, c.word = q.w as exact, c.image_count
      from unnest(${opts.words}::text[]) with ordinality q(w, k)
      cross join lateral (
        select id, word, image_count from caption_words
        where (word = q.w or similarity(word, q.w) >= ${SIMILARITY_THRESHOLD} and word % q.w)
          and image_count > 0
        order by word = q.w desc, similarity(word, q.w) desc, id
        limit ${MAX_CANDIDATES_PER_WORD}) c),
    per_word as materialized (
      select k, coalesce(array_agg(id) filter (where exact), '{}') as exact_ids,
             array_agg(id) as ids,
             coalesce(sum(image_count) filter (where exact), 0) as exact_count,
             sum(image_count) as count
      from cand group by k),
    plan as materialized (
      select (select count(*) from per_word) = ${opts.words.length} as found,
             (select count(*) from per_word where exact_count > 0) = ${opts.words.length} as exact,
             (select k from per_word order by exact_count, k limit 1) as exact_k,
             (select k from per_word order by count, k limit 1) as any_k,
             coalesce((select min(exact_count) from per_word), 0) as exact_count,
             coalesce((select min(count) from per_word), 0) as any_count),
    tagset as materialized (
      select array(select id from tags where name = any(${opts.tags}::text[])
                   order by image_count, id) as ids,
             (select count(*) from tags where name = any(${opts.tags}::text[]))
               = ${opts.tags.length} as found,
             coalesce((select min(image_count) from tags where name = any(${opts.tags}::text[])),
                      2147483647) as min_count),
    excluded as materialized (
      select array(select id from tags where name = any(${opts.exclude}::text[])) as ids),
    exact_hits as materialized (
      (select d.image_seq from image_words d
       where (select exact and exact_count <= (select min_count from tagset) from plan)
         and (select found from tagset)
         and d.word_id = any((select exact_ids from per_word where k = (select exact_k from plan))::bigint[])
         and d.image_seq < (select ${before2}::bigint)
         and ${everyWord(d, true)} and ${tagged(d)}
       order by d.image_seq desc ${scan})
      union all
      (select d.image_seq from image_tags d
       where (select exact and exact_count > (select min_count from tagset) from plan)
         and (select found from tagset)
         and d.tag_id = (select ids[1] from tagset)
         and d.image_seq < (select ${before2}::bigint)
         and ${everyWord(d, true)} and ${tagged(d)}
       order by d.image_seq desc ${scan})),
    near_hits as materialized (
      (select distinct p.image_seq
       from unnest((select ids from per_word where k = (select any_k from plan))) w(id)
       cross join lateral (
         select d.image_seq from image_words d
         where d.word_id = w.id and d.image_seq < (select ${before1}::bigint)
           and ${everyWord(d, false)} and not ${everyWord(d, true)} and ${tagged(d)}
         order by d.image_seq desc ${scan}) p
       where (select found and any_count <= (select min_count from tagset) from plan)
         and (select found from tagset)
         and (select count(*) from exact_hits) < ${opts.limit}
       order by p.image_seq desc ${scan})
      union all
      (select d.image_seq from image_tags d
       where (select found and any_count > (select min_count from tagset) from plan)
         and (select found from tagset)
         and (select count(*) from exact_hits) < ${opts.limit}
         and d.tag_id = (select ids[1] from tagset)
         and d.image_seq < (select ${before1}::bigint)
         and ${everyWord(d, false)} and not ${everyWord(d, true)} and ${tagged(d)}
       order by d.image_seq desc ${scan})),
    hits as (
      select 2 as level, image_seq from exact_hits
      union all
      select 1 as level, image_seq from near_hits)
    select ${COLUMNS(sql)}, ${TAGS(sql)}, h.level
    from hits h join images i on i.seq = h.image_seq
    order by h.level desc, h.image_seq desc limit ${opts.limit}`;
}
