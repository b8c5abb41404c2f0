/**
 * Captions for what someone is typing (issue 43, the chat command's autocomplete): the captions
 * of images that carry each finished word exactly and a word that starts with the word being
 * typed. A bounded number of index entries and images is read per keystroke, however common the
 * words (bench B14, autocomplete row); tests/caption_suggest_test.ts holds the behaviour.
 */
import type { Sql } from "./client.ts";

/** Most dictionary words a typed beginning is completed to (the most used first). */
export const MAX_COMPLETIONS = 8;

/**
 * From this many dictionary words that start with a beginning on, its completions are found by
 * walking the words most used first (migration 021), stopping at MAX_COMPLETIONS that start with
 * it; a beginning of fewer words has them read from the prefix range and sorted. A short
 * beginning starts thousands of words in a large dictionary (bench B14, autocomplete row).
 */
export const SORTED_COMPLETION_WORDS = 200;

/**
 * Most words that walk reads: a beginning's words may all be rare, and when the walk finds fewer
 * than MAX_COMPLETIONS, the prefix range is read and sorted after all.
 */
export const WALKED_COMPLETION_WORDS = 4096;

/**
 * Most images one suggestion reads: the newest of those carrying the rarer side (the rarest
 * finished word, or each completion's newest, an equal share each). A caption outside them is not
 * suggested.
 */
export const MAX_SUGGEST_IMAGES = 50;

/**
 * Up to `limit` distinct captions of images that carry every word of `finished` (exactly, as the
 * dictionary holds it) and a word starting with `typed`, the most sent first, then the newest.
 * `typed` must not be empty.
 */
export async function suggestCaptions(
  sql: Sql,
  opts: {
    finished: string[];
    typed: string;
    limit: number;
    /** Most images read (MAX_SUGGEST_IMAGES; tests set less). */
    examine?: number;
    /** SORTED_COMPLETION_WORDS and WALKED_COMPLETION_WORDS (tests set less). */
    sortedWords?: number;
    walkedWords?: number;
  },
): Promise<string[]> {
  if (!opts.typed || opts.limit < 1) throw new RangeError("a suggestion needs a beginning");
  const examine = opts.examine ?? MAX_SUGGEST_IMAGES;
  const sorted = opts.sortedWords ?? SORTED_COMPLETION_WORDS;
  // The words that start with the typed letters: a byte-wise range of the prefix index (019),
  // which a generic plan can bound, unlike a LIKE pattern (db/tags.ts prefix()).
  const begins = sql`c.word ~>=~ ${opts.typed} and c.word ~<~ ${opts.typed + "\u{10FFFF}"}`;
  const rows = await sql<{ text: string }[]>`
    with done as materialized (
      select coalesce(array_agg(cw.id), '{}') as ids,
        count(*) = cardinality(${opts.finished}::text[]) as known,
        min(cw.image_count) as fewest
      from caption_words cw where cw.word = any(${opts.finished}::text[])),
    -- The most used words that start with the typed letters. Many such words (counted in the
    -- range, up to how many are many): walked most used first, stopping at MAX_COMPLETIONS that
    -- start so; few, or a walk that found too few: the range, sorted. The outer order is the
    -- walk's own, so the walk stops early rather than being sorted whole.
    many as materialized (
      select count(*) >= ${sorted} as yes from (
        select from caption_words c where ${begins} limit ${sorted}) f),
    walked as materialized (
      select w.id, w.image_count from (
        select c.id, c.image_count, c.word from caption_words c where c.image_count > 0
        order by c.image_count desc, c.word
        limit ${opts.walkedWords ?? WALKED_COMPLETION_WORDS}) w
      where (select yes from many) and starts_with(w.word, ${opts.typed})
      order by w.image_count desc, w.word limit ${MAX_COMPLETIONS}),
    completions as materialized (
      select id, image_count from walked
      where (select count(*) from walked) = ${MAX_COMPLETIONS}
      union all
      (select r.id, r.image_count from (
         -- Read through the range, then sorted: the fence keeps the sort off the walk's index.
         select c.id, c.image_count, c.word from caption_words c
         where ${begins} and c.image_count > 0 offset 0) r
       where (select count(*) from walked) < ${MAX_COMPLETIONS}
       order by r.image_count desc, r.word limit ${MAX_COMPLETIONS})),
    -- Read from the rarer side: the rarest finished word, or each completion's newest images.
    from_finished as materialized (
      select coalesce((select fewest from done), 0) > 0
        and (select fewest from done) < (select sum(image_count) from completions) as yes),
    candidates as materialized (
      select distinct seq from (
        select x.seq from completions c cross join lateral (
          select iw.image_seq as seq from image_words iw where iw.word_id = c.id
          order by iw.image_seq desc
          -- An equal share each: the newest of every completion, not of the most used one only.
          limit (select (${examine} + count(*) - 1) / greatest(count(*), 1) from completions)) x
        where not (select yes from from_finished)
        union all
        select x.seq from caption_words cw cross join lateral (
          select iw.image_seq as seq from image_words iw where iw.word_id = cw.id
          order by iw.image_seq desc limit ${examine}) x
        where (select yes from from_finished) and cw.id in (select unnest(ids) from done)
          and cw.image_count = (select fewest from done)
        order by seq desc limit ${examine}) u)
    select text from (
      select distinct on (i.text) i.text, i.send_count, i.seq
      -- Each candidate's row by its position; the fence keeps the array tests off the word
      -- index, which would read every image of the words (a second at a million images).
      from candidates c cross join lateral (
        select i.text, i.send_count, i.seq, i.word_ids from images i where i.seq = c.seq offset 0) i
      where (select known from done) and i.text is not null
        and i.word_ids @> (select ids from done)
        and i.word_ids && array(select id from completions)
      order by i.text, i.send_count desc, i.seq desc) t
    order by send_count desc, seq desc limit ${opts.limit}`;
  return rows.map((r) => r.text);
}
