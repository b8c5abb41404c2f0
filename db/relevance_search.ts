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
 * whose ways to match have the fewest images). Each costs an image row and a phrase test, so the
 * bound is the cost of a public request (bench B14, B16). A query whose rarest word has more
 * images ranks the newest of them only (tests/relevance_test.ts, "examines").
 */
export const MAX_RELEVANCE_CANDIDATES = 1_000;

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
  const examine = opts.examine ?? MAX_RELEVANCE_CANDIDATES;
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
      -- A probe per near spelling (a handful): a join planned for hundreds read the dictionary.
      select nr.o, 'w', nr.id, 1, (select cw.image_count from caption_words cw where cw.id = nr.id)
      from near nr
      union all
      select t.o, 't', t.id, 2, tg.image_count from tagged t join tags tg on tg.id = t.id),
    -- Each word's ways as arrays, by how well they match: to test a candidate against them on the
    -- image's own word_ids and tag_ids, with no probe per candidate and way.
    per_word as materialized (
      select o,
        coalesce(array_agg(id) filter (where kind = 'w' and how = 3), '{}') as exact_ids,
        coalesce(array_agg(id) filter (where kind = 't'), '{}') as tag_ids,
        coalesce(array_agg(id) filter (where kind = 'w' and how = 1), '{}') as near_ids
      from ways group by o),
    -- The word with the fewest images drives: its newest images are the candidates.
    driver as materialized (
      select qw.o from qw left join ways w on w.o = qw.o
      group by qw.o order by coalesce(sum(w.n), 0), qw.o limit 1),
    -- The newest of each of the driver's ways (an index read backwards each), then the newest of
    -- those: the same images as the newest of their union, reading at most the bound per way.
    candidates as materialized (
      select distinct seq from (
        select seq from ways w cross join lateral (
          select iw.image_seq as seq from image_words iw
          where w.kind = 'w' and iw.word_id = w.id
          order by iw.image_seq desc limit ${examine}) x
        where w.o = (select o from driver)
        union all
        select seq from ways w cross join lateral (
          select it.image_seq as seq from image_tags it
          where w.kind = 't' and it.tag_id = w.id
          order by it.image_seq desc limit ${examine}) x
        where w.o = (select o from driver)
        order by seq desc limit ${examine}) c),
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
      from candidates c join images i on i.seq = c.seq
      -- How well the image matched its worst word (null: some word not at all), on its own
      -- word_ids and tag_ids: no probe per candidate and way.
      cross join lateral (
        select case when count(*) = ${opts.words.length} and bool_and(l is not null) then min(l) end
          as worst
        from (
          select case
            when i.word_ids && p.exact_ids then 3
            when i.tag_ids && p.tag_ids then 2
            when i.word_ids && p.near_ids then 1 end as l
          from per_word p) m) f
      where f.worst is not null and (select known from wanted)
        and i.tag_ids @> (select ids from wanted)
        and not (i.tag_ids && (select ids from excluded)))
    select ${COLUMNS(sql)}, ${TAGS(sql)}, i.level
    from ranked i
    where (i.level, i.send_count, i.seq) < (${after.level}::int, ${after.sendCount}::int,
      ${after.seq}::bigint)
    order by i.level desc, i.send_count desc, i.seq desc
    limit ${opts.limit}`;
}
