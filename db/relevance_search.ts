/**
 * The best match first (issue 43, `sort=relevance` and every chat search): images where each query
 * word matches the caption, exactly or approximately (a near spelling, as the caption search
 * finds them), or one of the image's tags (its name, or an alias of it, or one of their
 * `_`-separated parts), ranked by level:
 *   4  the query's words as a phrase in the caption,
 *   3  every word exactly in the caption,
 *   2  every word exactly in the caption or through a tag,
 *   1  some word only approximately,
 * and within a level by send_count (most sent first), then newest. `tags` and `exclude` filter as
 * the listings do. At most MAX_RELEVANCE_CANDIDATES images are ranked. tests/relevance_test.ts
 * holds each level and tie.
 */
import type { Sql } from "./client.ts";
import { COLUMNS, type ImageWithTags, TAGS } from "./images.ts";
import { meantTagIds } from "./tags.ts";

/**
 * Most images one relevance search ranks: the newest of those matching its rarest word (the word
 * whose ways to match have the fewest images). Without a bound, a query of common words read and
 * ranked every image carrying them, on a public route. A query whose rarest word has more images
 * ranks the newest of them only (tests/relevance_test.ts, "examines").
 */
export const MAX_RELEVANCE_CANDIDATES = 10_000;

/** How well an image matched (see the module). */
export type RelevanceLevel = 1 | 2 | 3 | 4;

/** An image found by relevance, with its level and what ranks it within the level. */
export interface RelevanceHit extends ImageWithTags {
  level: RelevanceLevel;
}

/** Where a page of a relevance search starts: after this (level, send_count, seq). */
export interface RelevanceCursor {
  level: RelevanceLevel;
  sendCount: number;
  seq: string;
}

/**
 * One page of the images matching every word of `words` (from queryWords()), best first; `phrase`
 * is the whole query, whose words in order in the caption make the best level.
 */
export async function searchByRelevance(
  sql: Sql,
  opts: {
    words: string[];
    phrase: string;
    tags: string[];
    exclude: string[];
    limit: number;
    after: RelevanceCursor | null;
    /** Smallest trigram similarity of a near spelling (SIMILARITY_THRESHOLD). */
    threshold: number;
    /** Most near spellings looked up for a word the dictionary does not hold. */
    candidates: number;
    /** Most candidate images ranked (MAX_RELEVANCE_CANDIDATES; tests set less). */
    examine?: number;
  },
): Promise<RelevanceHit[]> {
  if (!opts.words.length || opts.limit < 1) throw new RangeError("a search needs words and a page");
  const after = opts.after ?? { level: 5, sendCount: 0, seq: "0" };
  return await sql<RelevanceHit[]>`
    with qw as (select w, o from unnest(${opts.words}::text[]) with ordinality q(w, o)),
    exact as materialized (select qw.o, cw.id from qw join caption_words cw on cw.word = qw.w),
    near as materialized (
      select e.o, n.near_id as id from exact e
      join caption_word_neighbours n on n.word_id = e.id and n.similarity >= ${opts.threshold}
      union
      select qw.o, c.id from qw cross join lateral (
        select c.id from caption_words c
        where c.word % qw.w and similarity(c.word, qw.w) >= ${opts.threshold}
        order by similarity(c.word, qw.w) desc limit ${opts.candidates}) c
      where not exists (select 1 from exact e where e.o = qw.o)),
    tagged as materialized (
      select qw.o, t.id from qw join tags t on t.name like '%' || qw.w || '%'
        and (t.name = qw.w or qw.w = any(string_to_array(t.name, '_')))
      union
      select qw.o, a.target_id from qw join tag_aliases a on a.alias like '%' || qw.w || '%'
        and (a.alias = qw.w or qw.w = any(string_to_array(a.alias, '_')))),
    -- Each word's ways to match, and how well: a caption word exactly (3) or approximately (1),
    -- a tag (2); with how many images each has.
    ways as materialized (
      select e.o, 'w' as kind, e.id, 3 as how, cw.image_count as n
      from exact e join caption_words cw on cw.id = e.id
      union all
      select nr.o, 'w', nr.id, 1, cw.image_count from near nr join caption_words cw on cw.id = nr.id
      union all
      select t.o, 't', t.id, 2, tg.image_count from tagged t join tags tg on tg.id = t.id),
    -- The word with the fewest images drives: its newest images are the candidates.
    driver as materialized (
      select qw.o from qw left join ways w on w.o = qw.o
      group by qw.o order by coalesce(sum(w.n), 0), qw.o limit 1),
    candidates as materialized (
      select distinct seq from (
        select seq from (
          select iw.image_seq as seq from ways w join image_words iw on iw.word_id = w.id
          where w.kind = 'w' and w.o = (select o from driver)
          union all
          select it.image_seq from ways w join image_tags it on it.tag_id = w.id
          where w.kind = 't' and w.o = (select o from driver)) d
        order by seq desc limit ${opts.examine ?? MAX_RELEVANCE_CANDIDATES}) c),
    -- How each candidate matched each word: one primary-key probe per candidate and way.
    matched as (
      select c.seq, w.o, w.how from candidates c join ways w on w.kind = 'w'
      join image_words iw on iw.word_id = w.id and iw.image_seq = c.seq
      union all
      select c.seq, w.o, w.how from candidates c join ways w on w.kind = 't'
      join image_tags it on it.tag_id = w.id and it.image_seq = c.seq),
    found as (
      select seq, min(best) as worst from (
        select seq, o, max(how) as best from matched group by seq, o) m
      group by seq having count(*) = ${opts.words.length}),
    wanted as materialized (
      select coalesce(array_agg(id), '{}') as ids, coalesce(bool_and(id is not null), true) as known
      from (${meantTagIds(sql, opts.tags)}) w),
    excluded as materialized (
      select array(select id from (${meantTagIds(sql, opts.exclude)}) e where id is not null)
        as ids),
    ranked as (
      select i.*, case
          -- Both texts read as the caption's words are (domain/caption_text.ts wordsOf: NFKC, lower
          -- case, letters and digits), the same way, so that the phrase test compares like with like.
          when f.worst = 3 and position(
            ' ' || btrim(regexp_replace(lower(normalize(${opts.phrase}::text, NFKC)),
              '[^[:alnum:]]+', ' ', 'g')) || ' '
            in ' ' || btrim(regexp_replace(lower(normalize(i.text, NFKC)), '[^[:alnum:]]+', ' ', 'g'))
              || ' '
          ) > 0 then 4
          else f.worst end as level
      from found f join images i on i.seq = f.seq
      where (select known from wanted)
        and i.tag_ids @> (select ids from wanted)
        and not (i.tag_ids && (select ids from excluded)))
    select ${COLUMNS(sql)}, ${TAGS(sql)}, i.level
    from ranked i
    where (i.level, i.send_count, i.seq) < (${after.level}::int, ${after.sendCount}::int,
      ${after.seq}::bigint)
    order by i.level desc, i.send_count desc, i.seq desc
    limit ${opts.limit}`;
}
