/**
 * The caption search's statement builder: the SQL text of a search of each shape, with named
 * slots for its values (db/template.ts). Each shape's text is checked in as db/queries/*.sql
 * (`deno task queries` writes them; tests/db_queries_test.ts fails when they differ).
 */
import { COLUMNS, TAGS } from "./images.ts";
import { meantTagIdsOf } from "./tags.ts";
import { type Piece, q, raw, Slot, viaSql } from "./template.ts";
import {
  MERGE_ENTRY_COST,
  NEAR_WALK_COST,
  POSTING_COST,
  ROW_COST,
  SKIP_COST,
  WORD_TAG_MERGE_MAX_IMAGES,
  WORD_TAG_MERGE_MAX_RATIO,
} from "./caption_search_costs.ts";

/**
 * What a caption search's statement text depends on: the number of words, whether it has tags,
 * whether it filters by tags at all (tags or exclusions), and a forced way (tests).
 */
export interface SearchShape {
  n: number;
  withTags: boolean;
  filtered: boolean;
  method: "walk" | "index" | "merge" | undefined;
}

/**
 * The per-call values of a caption search's statement. Its text is built once per shape and kept
 * (db/template.ts): postgres.js rebuilt its hundred-odd fragments on every call, which cost the
 * client more CPU than the rest of a search (figures in
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
const $ = {
  words: new Slot("words"),
  tags: new Slot("tags"),
  exclude: new Slot("exclude"),
  limit: new Slot("limit"),
  before2: new Slot("before2"),
  before1: new Slot("before1"),
  n: new Slot("n"),
  threshold: new Slot("threshold"),
  candidates: new Slot("candidates"),
  forced: new Slot("forced"),
} as const;

/** The name of a caption search statement's slot. */
export type SearchSlot = (typeof $)[keyof typeof $]["name"];

/**
 * The statement of a caption search of this shape (see searchImagesByCaption): built from the shape
 * alone, so that nothing of one call's values can stay in the text kept for the next.
 */
export function searchStatement({ n, withTags, filtered, method }: SearchShape): Piece {
  // Each walk stops once it has the page (and one more): the plan is generic anyway
  // (searchImagesByCaption).
  const scan = q`limit ${$.limit}`;
  // The approximate level's walks stop at what the exact level left of the page: a search whose
  // exact hits nearly fill it walked each near spelling for a whole page (B10 in
  // bench/RESULTS.md#notes-moved-from-code-comments).
  const rest = q`limit (select ${$.limit} - count(*) from exact_hits)`;
  // On a walk of the rarest tag's own images (`ofRarest`) the other tags are probed, not that one:
  // a word and a tag probed every image of the tag for the tag (a third of such a search's pages).
  const tagged = (s: Piece, ofRarest = false) =>
    filtered
      ? q`not exists (select 1 from unnest((select ${
        ofRarest ? q`ids[2:]` : q`ids`
      } from tagset)) t(id)
      where not exists (select 1 from image_tags o where o.tag_id = t.id and o.image_seq = ${s}))
    and (select 1 from image_tags x
      where x.tag_id = any((select ids from excluded)::bigint[]) and x.image_seq = ${s} limit 1) is null`
      : q`true`;
  // Every query word is one of the image's words (`exact`), or each has a near spelling there.
  // One word is one probe of the primary key: the anti-join costs five times as much per image.
  const everyExact = (s: Piece) =>
    n === 1
      ? q`((select complete from plan) and exists (select 1 from image_words o
          where o.word_id = (select driver from plan) and o.image_seq = ${s}))`
      : q`((select complete from plan) and not exists (select 1 from exact e where not exists (
      select 1 from image_words o where o.word_id = e.id and o.image_seq = ${s})))`;
  // A walk of the driving word's own images (or a merge of them) carries it: the other words are
  // probed, not that one (two words probed each image of the rarer for both, the rarer first).
  const everyOtherExact = (s: Piece) =>
    n === 1 ? q`true` : q`((select complete from plan) and not exists (
      select 1 from exact e where e.id <> (select driver from plan) and not exists (
      select 1 from image_words o where o.word_id = e.id and o.image_seq = ${s})))`;
  // `+ 0`: the candidate's few entries are read through image_words_seq_idx and checked against
  // the list, instead of one descent of the primary key per listed word (up to 20).
  // On a walk of one near spelling's images (`walked`, the entry's word) the words that spelling
  // is near to are carried already: the others are probed (two words probed both, each time).
  const everyNear = (s: Piece, walked?: Piece) =>
    q`not exists (select 1 from per_word p where ${
      walked ? q`not ${walked} = any(p.ids) and` : q``
    } not exists (
      select 1 from image_words o where o.image_seq = ${s} and o.word_id + 0 = any(p.ids)))`;
  const d = q`d.image_seq`;
  // The word index only pays for two words or more: one word's posting list is what its walk
  // reads anyway, and the walk stops at the page. For one word the statement leaves the index
  // out: every branch of a plan costs its start-up even when a one-time condition skips it
  // (B10 in bench/RESULTS.md#notes-moved-from-code-comments).
  const indexed = method === "index" ||
    (method !== "walk" && (n > 1 || withTags));
  const total = indexed
    ? q`total as materialized (
      select greatest((select reltuples from pg_class where oid = 'images'::regclass), 1)::float8
        as n),`
    : q``;
  /**
   * Whether a level takes the word and tag index: when it costs less than the walk. The level's
   * words have `counts` images each (a sub-select of `c`, one row per word): the shortest of
   * their and the tags' posting lists is read whole, the others stepped through, and the images
   * that carry them all are read after. The walk reads its driver (`driven` images) until it has
   * the page, at most to the end: a candidate is a hit as often as an image carries every other
   * word and tag (independence assumed). `walkCost`: what one candidate of the walk costs, in
   * units of the exact level's; a merge's entry (MERGE_ENTRY_COST) weighs the index against it.
   */
  const indexCheaper = (counts: Piece, driven: Piece, walkCost = 1) => {
    if (!indexed) return q`false`;
    if (method) return q`${$.forced}`;
    const tags = withTags
      ? q`(select image_count as c from tags where id in (select id from wanted))`
      : q`(select 0 as c where false)`;
    // One pass over the words' and tags' counts, with `total` joined in: written as a sub-select
    // per term (twice for the hits), the expression was some 35 more nodes of every execution's
    // plan, which PostgreSQL sets up and tears down whether they run or not (B10's execution
    // times in bench/RESULTS.md#notes-moved-from-code-comments).
    return q`(select s.fewest * ${raw(String(POSTING_COST))}
          + (s.postings - s.fewest) * ${raw(String(SKIP_COST))}
          + s.hits * t.n * ${raw(String(ROW_COST))}
        < ${raw(String(walkCost))} * least((${driven}), (${$.limit}::float8 + 1) * (${driven})
                           / t.n / greatest(s.hits, 1e-300))
      from total t cross join lateral (
        select coalesce(sum(c), 0) as postings, coalesce(min(c), 0) as fewest,
               exp(coalesce(sum(ln(least(c::float8 / t.n, 1))), 0)) as hits
        from (select c from ${counts} x union all select c from ${tags} y) x) s)`;
  };
  // The approximate level through the word index: each word has a near spelling on the image.
  const nearEach = raw(
    Array.from(
      { length: n },
      (_, k) => `i.word_ids && (select ids from per_word where k = ${k + 1})`,
    )
      .join(" and "),
  );
  /**
   * A level's images from the word index: those of the images it gives that meet `level` (their
   * tags checked on the row, migration 010), newest first. `seq + 0`: ANDed with the seq index's
   * bitmap, the cursor read every image before it (at a million images; B10 in
   * bench/RESULTS.md#notes-moved-from-code-comments). The tags' condition only with tags:
   * `@> '{}'` holds for every image, and the tag index would be read whole for it.
   */
  const fromIndex = (level: Piece, before: Slot, stop: Piece) =>
    indexed
      ? q`(select i.seq as image_seq from (
          select i.seq from images i
          where ${level}
            ${withTags ? q`and i.tag_ids @> (select ids from tagset)` : q``}
            ${filtered ? q`and not i.tag_ids && (select ids from excluded)` : q``}
            and i.seq + 0 < (select ${before}::bigint)
          offset 0) i
        order by i.seq desc ${stop})
        union all`
      : q``;
  /**
   * Whether a level merges its driving word's images (`count`) with the rarest tag's: with tags,
   * when neither has more than WORD_TAG_MERGE_MAX_RATIO times the other's images and both together
   * at most WORD_TAG_MERGE_MAX_IMAGES.
   */
  const merges = (count: Piece) => {
    if (!withTags || (method && method !== "merge")) return q`false`;
    if (method === "merge") return q`true`;
    const ratio = raw(String(WORD_TAG_MERGE_MAX_RATIO));
    const cap = raw(String(WORD_TAG_MERGE_MAX_IMAGES));
    return q`greatest(${count}, (select min_count from tagset))
        <= ${ratio} * least(${count}, (select min_count from tagset))
      and ${count} + (select min_count from tagset) <= ${cap}`;
  };
  /**
   * A level's images from a merge of one word's images with the rarest tag's, both read in image
   * order (a merge join of two index-only scans), when `on` holds; `rest` checks the level's other
   * words, and `tagged` the other tags and the exclusions, on each image both carry. The join is
   * fenced (`offset 0`) so that those checks run on its few rows: with them on the word's scan
   * PostgreSQL's generic plan probed the tag for each of the word's images instead.
   */
  const merge = (on: Piece, word: Piece, rest: (s: Piece) => Piece, before: Slot) => {
    if (!withTags) return q``;
    // `j`: the checks' own sub-selects name their tables `o` and `x`.
    const j = q`j.image_seq`;
    return q`(select j.image_seq from (
        select d.image_seq from image_words d join image_tags m on m.image_seq = d.image_seq
        where d.word_id = ${word} and m.tag_id = (select ids[1] from tagset)
          and d.image_seq < (select ${before}::bigint) and m.image_seq < (select ${before}::bigint)
        order by d.image_seq desc offset 0) j
       where ${on} and ${rest(j)} and ${tagged(j, true)}
       order by j.image_seq desc ${scan})
      union all`;
  };
  /**
   * A level's walk of the rarest tag's images, a branch of its union when the search has tags:
   * `when` holds the level's conditions on the tag's entry `d`, `stop` its limit.
   */
  const tagWalk = (when: Piece, stop: Piece) =>
    withTags
      ? q`union all
      (select d.image_seq from image_tags d
       where ${when}
         and (select found from tagset)
         and d.tag_id = (select ids[1] from tagset)
       order by d.image_seq desc ${stop})`
      : q``;
  /** Whether the exact level walks the rarest tag's images (the other ways not cheaper). */
  const exactWalksTag = q`(select complete and not indexed and not merged
                          and driver_count > (select min_count from tagset)
                   from plan)`;
  /**
   * Whether the approximate level is looked up and takes the rarest tag's images: from the exact
   * level's walk of them when there was one (tag_walk), else by a walk of its own.
   */
  const nearWalksTag = q`(select count(*) from exact_hits) < ${$.limit}
    and (select found and not indexed and walked_count > (select min_count from tagset)
         from near_plan)`;
  /**
   * The exact level's walk of the rarest tag, which also keeps the candidates the approximate
   * level would walk the tag again for: each image of the tag (and the others, and none of the
   * exclusions) is an exact hit (`exact` true), exact but on an earlier page (false), or not
   * exact (null: the approximate level looks its words up when it needs more rows). The walk stops
   * where its limit did, at the page of exact hits: the count of those before a row is monotonic,
   * and PostgreSQL ends a window's scan once a condition on such a count fails.
   */
  const tagWalkBoth = withTags
    ? q`tag_walk as materialized (
      select image_seq, exact from (
        select image_seq, exact,
               count(*) filter (where exact) over (order by image_seq desc
                 rows between unbounded preceding and 1 preceding) as exacts_before
        from (select d.image_seq,
                     case when ${everyExact(d)} then d.image_seq < (select ${$.before2}::bigint) end
                       as exact
              from image_tags d
              where ${exactWalksTag}
                and (select found from tagset)
                and d.tag_id = (select ids[1] from tagset)
                and d.image_seq < (select ${$.before1}::bigint)
                and ${tagged(d, true)}
              order by d.image_seq desc) d) w
      where exacts_before < ${$.limit}),`
    : q``;
  // The tags the names mean (aliases resolved in this statement, no round trip of their own),
  // and those excluded. `found`: every name means a tag, and none of them is also excluded (a
  // walk would probe every image of it to find nothing). Without either, a constant row.
  const tagSteps = filtered
    ? q`wanted as materialized (${meantTagIdsOf($.tags)}),
    excluded as materialized (
      select array(select id from (${meantTagIdsOf($.exclude)}) e where id is not null)
        as ids),
    tagset as materialized (
      select array(select id from tags where id in (select id from wanted)
                   order by image_count, id) as ids,
             not exists (select 1 from wanted where id is null)
               and not exists (select 1 from wanted
                               where id = any((select ids from excluded)::bigint[])) as found,
             coalesce((select min(image_count) from tags where id in (select id from wanted)),
                      2147483647) as min_count),`
    : q`tagset as materialized (select true as found, 2147483647 as min_count),`;
  return q`
  with q as materialized (
    select w, k from unnest(${$.words}::text[]) with ordinality q(w, k)),
  exact as materialized (
    select q.k, c.id, c.image_count from q join caption_words c on c.word = q.w
    where c.image_count > 0),
  -- How many images there are (the planner's figure), for the word index's choice.
  ${total}
  ${tagSteps}
  plan as materialized (
    select p.*, not merged and complete and (select found from tagset) and ${
    indexCheaper(
      q`(select image_count as c from exact)`,
      q`least(driver_count, (select min_count from tagset))`,
    )
  } as indexed
    from (select p.*, complete and (select found from tagset) and ${merges(q`driver_count`)}
                   and not ${
    indexCheaper(
      q`(select image_count as c from exact)`,
      q`driver_count + (select min_count from tagset)`,
      MERGE_ENTRY_COST,
    )
  } as merged
    from (select (select count(*) from exact) = ${$.n} as complete,
                 array(select id from exact) as ids,
                 (select id from exact order by image_count, k limit 1) as driver,
                 coalesce((select min(image_count) from exact), 0) as driver_count) p) p),
  ${tagWalkBoth}
  exact_hits as materialized (
    ${
    fromIndex(
      q`(select indexed from plan) and i.word_ids @> (select ids from plan)`,
      $.before2,
      scan,
    )
  }
    ${
    merge(
      q`(select merged from plan)`,
      q`(select driver from plan)`,
      everyOtherExact,
      $.before2,
    )
  }
    (select d.image_seq from image_words d
     where (select complete and not indexed and not merged
                   and driver_count <= (select min_count from tagset)
            from plan)
       and (select found from tagset)
       and d.word_id = (select driver from plan)
       and d.image_seq < (select ${$.before2}::bigint)
       and ${everyOtherExact(d)} and ${tagged(d)}
     order by d.image_seq desc ${scan})
    ${withTags ? q`union all (select image_seq from tag_walk where exact)` : q``}),
  -- The approximate level, looked up only when the exact one did not fill the page: each
  -- word's dictionary neighbours (its own spelling included).
  cand as materialized (
    select q.k, c.id, c.image_count from q cross join lateral (
      select id, image_count from (
        select e.id, e.image_count, 2::real as s from exact e where e.k = q.k
        union all
        -- A word of the dictionary: its near spellings as stored (migration 013).
        select w.id, w.image_count, n.similarity from exact e
        join caption_word_neighbours n on n.word_id = e.id
        join caption_words w on w.id = n.near_id
        where e.k = q.k
        union all
        -- Any other: by trigram similarity over the dictionary.
        select id, image_count, similarity(word, q.w) from caption_words
        where not exists (select 1 from exact e where e.k = q.k)
          and similarity(word, q.w) >= ${$.threshold} and word % q.w) c
      where image_count > 0
      order by s desc, id
      limit ${$.candidates}) c),
  -- Each word's neighbours, and those that are not its own spelling ("others").
  per_word as materialized (
    select k, array_agg(id) as ids, sum(image_count) as count,
           array_agg(id) filter (where not own) as others,
           coalesce(sum(image_count) filter (where not own), 0) as others_count
    from (select c.*, exists (select 1 from exact e where e.k = c.k and e.id = c.id) as own
          from cand c) c
    group by k),
  -- Which images the approximate level walks, the fewer of: every neighbour of the word with
  -- the fewest images; or every word's other neighbours together. A near hit lacks the own
  -- spelling of some word, so it carries one of that word's others: both hold every near hit.
  -- For one word the others alone always win, as its own spelling's images are exact hits.
  near_plan as materialized (
    select w.*, found and (select found from tagset) and ${
    indexCheaper(
      q`(select count as c from per_word)`,
      q`least(walked_count, (select min_count from tagset))`,
      withTags ? 1 : NEAR_WALK_COST,
    )
  } as indexed
    from (select found, case when others_count <= driver_count then others else driver_ids end
                   as walked,
                 least(others_count, driver_count) as walked_count
    from (select (select count(*) from per_word) = ${$.n} as found,
                 (select ids from per_word order by count, k limit 1) as driver_ids,
                 coalesce((select min(count) from per_word), 0) as driver_count,
                 (select array_agg(o) from per_word, unnest(others) o) as others,
                 coalesce((select sum(others_count) from per_word), 0) as others_count) w) w),
  near_hits as materialized (
    ${
    fromIndex(
      q`(select count(*) from exact_hits) < ${$.limit} and (select indexed from near_plan)
    and ${nearEach}
    and not ((select complete from plan) and i.word_ids @> (select ids from plan))`,
      $.before1,
      rest,
    )
  }
    (select distinct p.image_seq
     from unnest((select walked from near_plan)) w(id)
     cross join lateral (
       select d.image_seq from image_words d
       where d.word_id = w.id and d.image_seq < (select ${$.before1}::bigint)
         and ${n === 1 ? q`true` : everyNear(d, q`d.word_id`)} and not ${everyExact(d)}
         and ${tagged(d)}
       order by d.image_seq desc ${rest}) p
     where (select count(*) from exact_hits) < ${$.limit}
       and (select found and not indexed and walked_count <= (select min_count from tagset)
            from near_plan)
       and (select found from tagset)
     order by p.image_seq desc ${rest})
    ${
    withTags
      ? q`union all
    -- The candidates the exact level's walk of the tag kept, in the order it walked them (a
    -- materialised step's rows come back as written): no ORDER BY, which would sort them, and
    -- so look every one of them up before the limit.
    (select w.image_seq from tag_walk w
     where ${nearWalksTag}
       and w.exact is null and ${everyNear(q`w.image_seq`)}
     ${rest})`
      : q``
  }
    ${
    tagWalk(
      q`${nearWalksTag}
      and not ${exactWalksTag}
      and d.image_seq < (select ${$.before1}::bigint)
      and ${everyNear(d)} and not ${everyExact(d)} and ${tagged(d, true)}`,
      rest,
    )
  }),
  page as (
    select 2 as level, image_seq from exact_hits
    union all
    select 1 as level, image_seq from near_hits
    order by level desc, image_seq desc limit ${$.limit})
  select ${viaSql(COLUMNS)}, ${viaSql(TAGS)}, h.level
  from page h join images i on i.seq = h.image_seq
  order by h.level desc, h.image_seq desc`;
}
