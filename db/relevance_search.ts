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
 * the listings do. tests/relevance_test.ts holds each level and tie.
 */
import type { Sql } from "./client.ts";
import { COLUMNS, type ImageWithTags, TAGS } from "./images.ts";
import { meantTagIds } from "./tags.ts";

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
    -- How each image matched each word: 3 exactly, 2 through a tag, 1 approximately.
    matched as (
      select iw.image_seq as seq, e.o, 3 as how from exact e join image_words iw on iw.word_id = e.id
      union all
      select iw.image_seq, n.o, 1 from near n join image_words iw on iw.word_id = n.id
      union all
      select it.image_seq, t.o, 2 from tagged t join image_tags it on it.tag_id = t.id),
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
