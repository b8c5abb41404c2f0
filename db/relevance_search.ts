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
 *
 * The search reads in stages and stops as soon as the page is certain: the sent images first (few,
 * by the send-count index), then the images of the rarest word's ways, newest first in growing
 * batches, the ways that can reach the best level first (the caption word exactly, then its tags,
 * then its near spellings); a phrase of two words or more comes first, through its adjacent word
 * pairs (caption_pairs, migration 020). A row is certain when nothing unread can rank above it, so
 * a one-word query reads about a page of rows and no more (bench B14, relevance row). Two words or
 * more whose images seldom meet, as their counts say, are instead found at once through the word
 * and tag index, every image with each word one way, or with every word exactly, however old. At
 * most MAX_RELEVANCE_CANDIDATES images are read in all.
 */
import type { Fragment, Sql } from "./client.ts";
import { COLUMNS, type ImageWithTags, TAGS } from "./images.ts";
import { meantTagIds } from "./tags.ts";
import { wordRuns } from "../domain/caption_text.ts";

/**
 * Most images one relevance search reads of the sent ones, and again of the newest of those
 * matching its rarest word (the word whose ways to match have the fewest images). Each costs an image row and
 * maybe a phrase test, so the bound is the cost of a public request (bench B14, B16). A query
 * whose rarest word has more images ranks the newest of them only (tests/relevance_test.ts,
 * "examines").
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

/** How each word of a query can match: its caption words exactly, its tags, its near spellings. */
interface WordWays {
  o: number;
  exact: string[];
  tags: string[];
  near: string[];
  /** How many images its ways have, in all (an image may count more than once). */
  n: number;
  /** How many images its exact way has. */
  exactN: number;
}

/** The query's words' ways and the tag filters, looked up once per search. */
interface Plan {
  words: WordWays[];
  driver: number;
  wanted: string[];
  excluded: string[];
  /** How many images the board has (the planner's estimate). */
  images: number;
  /** The phrase's adjacent word pairs, as caption_pairs keys them (migration 020). */
  pairs: string[];
  /** Whether some caption holds the first of them. */
  paired: boolean;
}

/** The first batch of a probing stage, at least. */
const PROBE_BATCH = 64;

/** One walk of the driving word's ways: newest first, until the page is certain. */
interface Stage {
  table: "image_words" | "image_tags" | "caption_pairs";
  ids: string[];
  /** The best level an image this stage reads can have that no earlier stage read. */
  best: number;
  probe: Fragment | null;
}

/** A candidate that matched, and where it ranks. */
interface Ranked {
  seq: bigint;
  level: RelevanceLevel;
  sendCount: number;
}

/**
 * A candidate as rank() reads it: its level (null: it does not match), and whether it came from
 * the stage's batch (not the sent images read with it); with full, the image's columns and tags.
 */
type RankedRow = {
  seq: string;
  level: RelevanceLevel | null;
  send_count: number;
  batch: boolean;
} & Partial<ImageWithTags>;

/** SQL: candidates `seq` of `rows` (a statement), each read when `pass` (SQL on `c.seq`) holds. */
const candidatesOf = (sql: Sql, rows: Fragment, pass: Fragment | null, batch = true) =>
  sql`select c.seq, ${pass ?? sql`true`} as pass, ${batch ? sql`true` : sql`false`} as batch
    from (${rows}) c`;

/**
 * The ways of each word (null when some word has none: nothing matches), the driving word (the
 * one whose ways have the fewest images), and the tag filters' IDs (null when a wanted tag does
 * not exist: nothing matches).
 */
async function planSearch(
  sql: Sql,
  opts: {
    words: string[];
    phrase: string;
    tags: string[];
    exclude: string[];
    threshold: number;
    candidates: number;
    /** Whether the phrase's pairs are looked up: not when its word implies it (phraseIsTheWord). */
    pairs: boolean;
  },
): Promise<Plan | null> {
  // Without pairs to read, none are hashed (bench/RESULTS.md, 2026-11-29 night).
  const keys = opts.pairs ? sql`caption_pair_keys(${opts.phrase})` : sql`'{}'::bigint[]`;
  const [row] = await sql<
    {
      words: WordWays[] | null;
      driver: number | null;
      wanted: string[];
      known: boolean;
      excluded: string[];
      images: number;
      pairs: string[];
      paired: boolean;
    }[]
  >`
    with qw as (select w, o from unnest(${opts.words}::text[]) with ordinality q(w, o)),
    exact as materialized (select qw.o, cw.id from qw join caption_words cw on cw.word = qw.w),
    near as materialized (
      -- A lateral each, fenced: the generic plan (the search pool's) otherwise hash-joins every
      -- stored neighbour (tests/relevance_test.ts cannot see it; bench B14 can).
      select e.o, n.id from exact e cross join lateral (
        select n.near_id as id from caption_word_neighbours n
        where n.word_id = e.id and n.similarity >= ${opts.threshold} offset 0) n
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
    per_word as materialized (
      select o,
        coalesce(array_agg(id) filter (where kind = 'w' and how = 3), '{}') as exact,
        coalesce(array_agg(id) filter (where kind = 't'), '{}') as tags,
        coalesce(array_agg(id) filter (where kind = 'w' and how = 1), '{}') as near,
        coalesce(sum(n), 0) as n, coalesce(sum(n) filter (where how = 3), 0) as exact_n
      from ways group by o),
    wanted as materialized (
      select coalesce(array_agg(id), '{}') as ids, coalesce(bool_and(id is not null), true) as known
      from (${meantTagIds(sql, opts.tags)}) w),
    excluded as materialized (
      select array(select id from (${meantTagIds(sql, opts.exclude)}) e where id is not null)
        as ids)
    select
      (select json_agg(json_build_object('o', o, 'exact', exact::text[], 'tags', tags::text[],
        'near', near::text[], 'n', n, 'exactN', exact_n) order by o) from per_word) as words,
      (select greatest(reltuples, 1)::float8 from pg_class where oid = 'images'::regclass)
        as images,
      (select o from per_word order by n, o limit 1)::int as driver,
      (select ids::text[] from wanted) as wanted, (select known from wanted) as known,
      (select ids::text[] from excluded) as excluded,
      p.keys::text[] as pairs,
      exists (select 1 from caption_pairs cp where cp.pair = p.keys[1]) as paired
    from (select ${keys} as keys) p`;
  if (!row.words || row.words.length < opts.words.length || !row.known) return null;
  return {
    words: row.words.map((w) => ({ ...w, n: Number(w.n), exactN: Number(w.exactN) })),
    driver: row.driver!,
    wanted: row.wanted,
    excluded: row.excluded,
    images: row.images,
    pairs: row.pairs,
    paired: row.paired,
  };
}

/**
 * How `candidates` (a statement of `seq` rows) match: every candidate's seq, with its level and
 * send count when it matches every word and the tag filters (null level otherwise).
 */
async function rank(
  sql: Sql,
  plan: Plan,
  candidates: Fragment,
  phrase: { text: string; implied: boolean },
  /** Each row's columns and tags too, as the page's images are read (searchByRelevance). */
  full = false,
): Promise<RankedRow[]> {
  // How well the image matches each word, on its own word_ids and tag_ids (no probe per candidate
  // and way): 3 exactly, 2 through a tag, 1 approximately, null not at all.
  const levels = plan.words.map((w, k) =>
    sql`case when i.word_ids && ${w.exact}::bigint[] then 3
      when i.tag_ids && ${w.tags}::bigint[] then 2
      when i.word_ids && ${w.near}::bigint[] then 1 end as ${sql(`l${k}`)}`
  ).reduce((a, b) => sql`${a}, ${b}`);
  const columns: Fragment[] = plan.words.map((_, k) => sql`${sql(`l${k}`)}`);
  const missing = columns.map((l) => sql`${l} is null`).reduce((a, b) => sql`${a} or ${b}`);
  const least = columns.reduce((a, b) => sql`${a}, ${b}`);
  return await sql`
    with candidates as materialized (select seq, pass, batch from (${candidates}) c),
    -- Both texts read as the caption's words are (domain/caption_text.ts wordsOf: NFKC, lower
    -- case, letters and digits), the same way, so that the phrase test compares like with like;
    -- the phrase's once. Its re: the same test on a caption NFKC leaves as it is, its words in
    -- order, apart only by other characters, without rewriting the caption (bench/RESULTS.md).
    phrase as materialized (
      select ' ' || w || ' ' as words,
        '(^|[^[:alnum:]])' || replace(w, ' ', '[^[:alnum:]]+') || '([^[:alnum:]]|$)' as re
      from (select btrim(regexp_replace(lower(normalize(${phrase.text}::text, NFKC)),
        '[^[:alnum:]]+', ' ', 'g')) as w) p)
    select ${full ? sql`${COLUMNS(sql)}, ${TAGS(sql)},` : sql``}
      c.seq::text as seq, i.send_count, c.batch, case
        when f.worst is null or not i.tag_ids @> ${plan.wanted}::bigint[]
          or i.tag_ids && ${plan.excluded}::bigint[] then null
        -- A one-word phrase is implied by its word exactly in the caption.
        when f.worst = 3 and (${phrase.implied} or case when i.text is nfkc normalized
            then lower(i.text) ~ (select re from phrase)
            else position((select words from phrase) in ' ' || btrim(regexp_replace(
              lower(normalize(i.text, NFKC)), '[^[:alnum:]]+', ' ', 'g')) || ' ') > 0 end) then 4
        else f.worst end as level
    from candidates c
    left join lateral (select * from images i where c.pass and i.seq = c.seq offset 0) i on true
    -- How well the image matched its worst word (null: some word not at all).
    cross join lateral (
      select case when ${missing} then null else least(${least}) end as worst
      from (select ${levels}) m) f`;
}

/** The column of `table` that names the word, tag or pair. */
const keyOf = (sql: Sql, table: Stage["table"]) =>
  table === "image_words" ? sql`word_id` : table === "image_tags" ? sql`tag_id` : sql`pair`;

/** SQL: whether candidate `c` carries one of `ids` in `table`, by one index probe per ID. */
const carries = (sql: Sql, table: Stage["table"], ids: string[]) =>
  sql`exists (select 1 from ${sql(table)} p
    where p.${keyOf(sql, table)} = any(${ids}::bigint[]) and p.image_seq = c.seq)`;

/** Whether `phrase`, read as captions are, is the one word `words` holds. */
function phraseIsTheWord(phrase: string, words: string[]): boolean {
  const runs = wordRuns(phrase);
  return words.length === 1 && runs.length === 1 && runs[0] === words[0];
}

/** Whether `a` ranks before `b`: level, then send count, then newest. */
function before(a: Ranked, b: Ranked): boolean {
  if (a.level !== b.level) return a.level > b.level;
  if (a.sendCount !== b.sendCount) return a.sendCount > b.sendCount;
  return a.seq > b.seq;
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
    /** Most candidate images read (MAX_RELEVANCE_CANDIDATES; tests set less). */
    examine?: number;
    /** The first batch of a probing stage, at least (PROBE_BATCH; tests set less). */
    probeBatch?: number;
    /** How the images of two words or more are found, instead of by the counts (tests). */
    method?: "index" | "walk";
  },
): Promise<RelevanceHit[]> {
  if (!opts.words.length || opts.limit < 1) throw new RangeError("a search needs words and a page");
  const examine = opts.examine ?? MAX_RELEVANCE_CANDIDATES;
  const phrase = { text: opts.phrase, implied: phraseIsTheWord(opts.phrase, opts.words) };
  // An implied phrase is never looked for through its pairs (walk(), byPairs).
  const plan = await planSearch(sql, { ...opts, pairs: !phrase.implied });
  if (!plan) return [];
  const cursor: Ranked | null = opts.after
    ? { level: opts.after.level, sendCount: opts.after.sendCount, seq: BigInt(opts.after.seq) }
    : null;
  const found = new Map<bigint, Ranked>();
  // The images read in full on the way (the walk's first statement): not read again at the end.
  const read = new Map<string, ImageWithTags>();
  const take = (rows: RankedRow[]) => {
    for (const r of rows) {
      const hit = { seq: BigInt(r.seq), level: r.level!, sendCount: r.send_count };
      if (r.level !== null && (!cursor || before(cursor, hit))) found.set(hit.seq, hit);
      if (r.level !== null && r.id) read.set(r.seq, r as ImageWithTags);
    }
  };
  // Two words or more whose images seldom meet: every image that matches each word one of its ways
  // is read at once through the word and tag index, however old, and ranked; a walk would read
  // up to its bound of the driving word's images for the few that carry the others too. More
  // than the bound means that the words meet more often than their counts said: the walk then
  // finds its page among the newest (tests/relevance_test.ts, "seldom meet").
  const index = (counts: (w: WordWays) => number, page: number) =>
    plan.words.length > 1 &&
    (opts.method ? opts.method === "index" : indexCheaper(plan, counts, page, examine));
  const all = index((w) => w.n, opts.limit) &&
      tagWays(plan) <= MAX_TAG_WAYS
    ? await rank(sql, plan, candidatesOf(sql, matchingEvery(sql, plan, examine), null), phrase)
    : null;
  if (all && all.length <= examine) take(all);
  else {
    // The same for the images with every word exactly (levels 4 and 3), when they seldom meet:
    // the walk then reads only the levels below. Its probing stage reads until it has a page (the
    // phrase is found through its pairs); without pairs, until a page of phrases, which are rarer
    // still: as if for a page of all it may read.
    const page = plan.pairs.length ? opts.limit : examine;
    const exact = index((w) => w.exactN, page) &&
        plan.words.every((w) => w.exact.length)
      ? await rank(sql, plan, candidatesOf(sql, carryingEvery(sql, plan, examine), null), phrase)
      : null;
    const complete = exact !== null && exact.length <= examine;
    if (complete) take(exact);
    await walk(sql, plan, { ...opts, examine, exactRead: complete }, phrase, found, take);
  }
  const page = [...found.values()].sort((a, b) => (before(a, b) ? -1 : 1)).slice(0, opts.limit);
  const unread = page.map((h) => h.seq.toString()).filter((seq) => !read.has(seq));
  if (unread.length) {
    const rows = await sql<ImageWithTags[]>`
      select ${COLUMNS(sql)}, ${TAGS(sql)} from images i where i.seq = any(${unread}::bigint[])`;
    for (const row of rows) read.set(row.seq, row);
  }
  // The rows are this search's own: each takes its level in place rather than being copied (a
  // rank() row also keeps its `batch`, which no reader of an image looks at).
  return page.flatMap((h) => {
    const row = read.get(h.seq.toString()) as RelevanceHit | undefined;
    if (!row) return [];
    row.level = h.level;
    return [row];
  });
}

/**
 * What the index costs (see indexCheaper): an image it reads and ranks, and a posting of the word
 * with the fewest. The best of five pairs tried on B14's two-word searches (bench/RESULTS.md,
 * 2026-11-29 night); skipping through the longer lists is cheap because the index skips whole
 * pages of them.
 */
const INDEX_ROW_COST = 2;
/** See INDEX_ROW_COST. */
const INDEX_POSTING_COST = 0.01;

/**
 * Whether reading every image that matches each word `count`'s way through the index costs less
 * than a walk of the driving word, in units of one candidate of the walk read and ranked: the
 * index reads the images where the words meet (expected from the counts, the words independent;
 * at most `examine`) and the postings of the word with the fewest, and steps through the others'
 * towards them at no cost that shows; the walk reads a page's worth of those among the driving
 * word's images, newest first (tests/relevance_test.ts, "seldom meet").
 */
function indexCheaper(
  plan: Plan,
  count: (w: WordWays) => number,
  /** The page the walk reads for. */
  limit: number,
  examine: number,
): boolean {
  const meet = plan.words.reduce((n, w) => n * Math.min(1, count(w) / plan.images), plan.images);
  const driven = count(plan.words.find((w) => w.o === plan.driver)!);
  const walk = Math.min(driven, examine, limit * driven / Math.max(meet, 1e-9));
  const shortest = Math.min(...plan.words.map(count));
  const index = meet * INDEX_ROW_COST + shortest * INDEX_POSTING_COST;
  return meet <= examine && index < walk;
}

/** Most words with tag ways that matchingEvery() takes: each doubles its index scans. */
const MAX_TAG_WAYS = 2;

/** How many words of `plan` can match through a tag. */
const tagWays = (plan: Plan) => plan.words.filter((w) => w.tags.length).length;

/** SQL: up to `examine` + 1 images that carry every word of `plan` exactly, in no order. */
function carryingEvery(sql: Sql, plan: Plan, examine: number): Fragment {
  return sql`select i.seq from images i
    where i.word_ids @> ${plan.words.flatMap((w) => w.exact)}::bigint[] limit ${examine + 1}`;
}

/**
 * SQL: up to `examine` + 1 images that match every word of `plan` one of its ways (a caption word,
 * exactly or near, or a tag), from the word and tag index (images_words_tags_idx) in no order.
 * The tag filters are left to rank(): `tag_ids @> '{}'` would read the whole index.
 */
function matchingEvery(sql: Sql, plan: Plan, examine: number): Fragment {
  // A word without tags is one condition of the index scan; with tags, two scans OR-ed.
  const each = plan.words.map((w) => {
    const words = sql`i.word_ids && ${[...w.exact, ...w.near]}::bigint[]`;
    return w.tags.length ? sql`(${words} or i.tag_ids && ${w.tags}::bigint[])` : words;
  }).reduce((a, b) => sql`${a} and ${b}`);
  return sql`select i.seq from images i where ${each} limit ${examine + 1}`;
}

/**
 * The search by reading (see the module): the sent images that carry the driving word, then the
 * driving word's ways newest first, in stages, until the page is certain or `examine` are read.
 */
async function walk(
  sql: Sql,
  plan: Plan,
  opts: {
    limit: number;
    examine: number;
    probeBatch?: number;
    /** Every image with every word exactly is read already (no probing stage). */
    exactRead?: boolean;
  },
  phrase: { text: string; implied: boolean },
  found: Map<bigint, Ranked>,
  take: (rows: RankedRow[]) => void,
): Promise<void> {
  const { examine } = opts;
  const driver = plan.words.find((w) => w.o === plan.driver)!;
  // The sent images rank first within each level: read by the send-count index, and only those
  // that carry one of the driving word's ways (a probe of the word and tag indexes each) are read
  // in full, so that a board of many sent images does not read them all for every search. They
  // are read with the first batch, in one statement, which reads its hits' columns too: a page
  // found there is not read again.
  const carriesDriver = sql`(${carries(sql, "image_words", [...driver.exact, ...driver.near])}
    or ${carries(sql, "image_tags", driver.tags)})`;
  const sent = candidatesOf(
    sql,
    sql`select seq from images where send_count > 0 order by send_count desc, seq desc
      limit ${examine}`,
    carriesDriver,
    false,
  );
  let sentRead = false;
  // Then the driving word's ways, newest first, in the order of the best level each can reach.
  const others = plan.words.filter((w) => w !== driver);
  // With more than one word, the images with every word exactly (levels 4 and 3) are found first,
  // by a probe of the word index per candidate: only those are read before the page is known.
  const allExact = !opts.exactRead && others.length > 0 &&
    plan.words.every((w) => w.exact.length > 0);
  const exactProbe = allExact
    ? others.map((w) => carries(sql, "image_words", w.exact)).reduce((a, b) => sql`${a} and ${b}`)
    : null;
  // The phrase (level 4) of more than one word is found first through its first pair, each
  // candidate probed for the others (migration 020): no later stage reaches level 4, so a page of
  // every word exact is certain without reading every older image for a phrase
  // (tests/relevance_test.ts, "an old phrase under more than the bound").
  const byPairs = !phrase.implied && !opts.exactRead && plan.pairs.length > 0 &&
    plan.words.every((w) => w.exact.length > 0);
  const pairProbe = plan.pairs.length > 1
    ? plan.pairs.slice(1).map((p) => carries(sql, "caption_pairs", [p]))
      .reduce((a, b) => sql`${a} and ${b}`)
    : null;
  const exactBest = byPairs ? 3 : 4;
  const stages: Stage[] = [
    // No caption holds the first pair (most pairs of common words): no statement for them.
    ...(byPairs && plan.paired
      ? [{
        table: "caption_pairs" as const,
        ids: plan.pairs.slice(0, 1),
        best: 4,
        probe: pairProbe,
      }]
      : []),
    ...(exactProbe
      ? [{ table: "image_words" as const, ids: driver.exact, best: exactBest, probe: exactProbe }]
      : []),
    // The images with every word exactly are read by now (the probe, or exactRead): the driving
    // word's others reach level 2 through another word's tag, else 1.
    {
      table: "image_words",
      ids: driver.exact,
      best: !others.length ? exactBest : others.some((w) => w.tags.length) ? 2 : 1,
      probe: null,
    },
    { table: "image_tags", ids: driver.tags, best: 2, probe: null },
    { table: "image_words", ids: driver.near, best: 1, probe: null },
  ];
  let read = 0;
  // Whether an unread image of a stage that reaches `best` at most, older than `below`, could rank
  // above the page's last hit: it is not sent (the sent images are read), so it ranks above a
  // hit of its level only if that hit is not sent and older.
  const open = (best: number, below: bigint) => {
    if (found.size < opts.limit) return true;
    const last = [...found.values()].sort((a, b) => (before(a, b) ? -1 : 1))[opts.limit - 1];
    if (best !== last.level) return best > last.level;
    return last.sendCount === 0 && below > last.seq;
  };
  for (const stage of stages) {
    if (!stage.ids.length) continue;
    let below = 9223372036854775807n;
    // A page's worth first (all a one-word search reads), then four times the last batch each
    // time: a word whose images seldom hold the others is read to its end in a few statements
    // (a statement costs more than a few rows: bench/RESULTS.md, 2026-11-29 afternoon).
    const growth = 4;
    let batch = stage.probe ? Math.max(4 * opts.limit, opts.probeBatch ?? PROBE_BATCH) : opts.limit;
    const column = keyOf(sql, stage.table);
    while (read < examine && open(stage.best, below)) {
      const size = Math.min(batch, examine - read);
      const next = candidatesOf(
        sql,
        sql`select seq from (
          select distinct x.seq from unnest(${stage.ids}::bigint[]) w(id) cross join lateral (
            select e.image_seq as seq from ${sql(stage.table)} e
            where e.${column} = w.id and e.image_seq < ${below.toString()}::bigint
            order by e.image_seq desc limit ${size}) x) c
          order by seq desc limit ${size}`,
        stage.probe,
      );
      const rows = await rank(
        sql,
        plan,
        sentRead ? next : sql`${sent} union all ${next}`,
        phrase,
        !sentRead,
      );
      sentRead = true;
      take(rows);
      const batchRows = rows.filter((r) => r.batch);
      read += batchRows.length;
      if (batchRows.length < size) break;
      below = batchRows.reduce((m, r) => (BigInt(r.seq) < m ? BigInt(r.seq) : m), below);
      batch *= growth;
    }
    // The probing stage has a budget of its own: it reads the index, and only its hits' rows.
    if (stage.probe) read = 0;
    if (read >= examine) break;
  }
  // No batch read means that the index filled the page with every word exactly (levels 4 and 3),
  // sent ones included: a sent image can rank above none of them, and none is read.
}
