/**
 * Tags: the tag list, autocomplete, and how names become tags on writes: an alias is replaced by
 * its target and a tag brings everything it implies (migration 007). Tags are created where they
 * are linked (db/images.ts); their counts are kept by triggers (007). Alias and implication
 * changes, rename and merge are in db/tag_rules.ts.
 */
import type postgres from "postgres";
import type { ListTagsQuery, TagDto, TagSuggestion } from "../domain/types.ts";
import { type Sql, withGenericPlan } from "./client.ts";
import { type Piece, Slot, viaSql } from "./template.ts";

type AnySql = Sql | postgres.TransactionSql;

/** Escapes LIKE's wildcards so a search matches only the literal text. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

/**
 * Key of the advisory lock between tag writes (shared: uploads, tag edits, applying
 * implications) and changes of the tag rules (exclusive: aliases, implications, rename and merge).
 * A rule change waits for the writes in flight and the writes after it see it, so no write can
 * link a tag that an alias just replaced, or miss an implication set while it ran.
 */
export const TAG_RULES_LOCK = 0x7461675f72756c65n; // "tag_rule"

/** The statement that takes the tag rules' lock shared, for the rest of the transaction. */
export function lockTagRulesShared(tx: postgres.TransactionSql) {
  return tx`select pg_advisory_xact_lock_shared(${TAG_RULES_LOCK.toString()}::bigint)`;
}

/** SQL: `names` with every alias replaced by its target's name, as rows of `name`. */
export function resolvedNames(sql: AnySql, names: string[]) {
  return sql`select coalesce(t.name, n.name) as name
    from unnest(${names}::text[]) n(name)
    left join tag_aliases a on a.alias = n.name left join tags t on t.id = a.target_id`;
}

/**
 * SQL: the tag each of `names` means, as rows of `id`, one per name: an alias's target, else the
 * tag of that name, null when neither exists. For statements that filter by the names a request
 * gives (listings, caption search): resolving them in a statement of their own cost a round trip
 * each, a quarter of a filtered listing's throughput (B12 `t2,-t1`;
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
export function meantTagIds(sql: AnySql, names: string[]) {
  return sql`select coalesce(a.target_id, t.id) as id from unnest(${names}::text[]) n(name)
    left join tag_aliases a on a.alias = n.name left join tags t on t.name = n.name`;
}

/** meantTagIds() for a statement kept by shape (db/template.ts), the names a slot's value. */
export const meantTagIdsOf = (names: Slot): Piece =>
  viaSql((sql) => meantTagIds(sql, names as unknown as string[]));

/**
 * SQL: the IDs of the existing tags that `names` resolve to and of everything they imply,
 * transitively, as rows of `id` (`union` also ends a cycle, though none can be stored).
 */
export function impliedClosure(sql: AnySql, names: string[]) {
  return sql`with recursive closure(id) as (
      select t.id from tags t where t.name in (${resolvedNames(sql, names)})
      union
      select ti.implied_id from tag_implications ti join closure c on ti.tag_id = c.id)
    select id from closure`;
}

/** The names that `names` resolve to through aliases, in order, de-duplicated. */
export async function resolveTagNames(sql: AnySql, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await sql<{ name: string }[]>`
    select coalesce(t.name, n.name) as name
    from unnest(${names}::text[]) with ordinality n(name, o)
    left join tag_aliases a on a.alias = n.name left join tags t on t.id = a.target_id
    order by n.o`;
  return [...new Set(rows.map((r) => r.name))];
}

/** Which of `names` are tags that have images, or aliases of one. */
export async function knownTagNames(sql: AnySql, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await sql<{ name: string }[]>`
    select name from tags where name = any(${names}::text[]) and image_count > 0
    union
    select alias from tag_aliases where alias = any(${names}::text[])`;
  return new Set(rows.map((r) => r.name));
}

/**
 * The tag list: tags that have images, filtered and ordered as asked. The search also finds a tag
 * through its aliases (`lol` finds `laughing`); their targets are looked up once (an init plan).
 */
export function listTags(sql: Sql, q: ListTagsQuery): Promise<TagDto[]> {
  const minCount = Math.max(1, q.min_count ?? 1);
  const order = q.sort === "count_desc" ? sql`image_count desc, name` : sql`name`;
  const search = q.q
    ? sql`and (${substring(sql, "name", q.q)} or id = any(array(
        select target_id from tag_aliases where ${substring(sql, "alias", q.q)})))`
    : sql``;
  return sql<TagDto[]>`
    select name, image_count from tags
    where image_count >= ${minCount} ${search}
    order by ${order}
    limit ${q.limit} offset ${q.offset}`;
}

/**
 * SQL: `column` contains `text` (lower-cased, like stored names). From three characters on, the
 * trigram index narrows the rows; below that it cannot, and a prepared statement's generic plan
 * would still pick it and recheck every tag, so a plain substring test lets the planner walk the
 * ordered index and stop at the limit instead (B12;
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
function substring(sql: Sql, column: "name" | "alias", text: string) {
  return [...text].length >= 3
    ? sql`${sql(column)} ilike ${"%" + escapeLike(text) + "%"}`
    : sql`strpos(${sql(column)}, ${text}) > 0`;
}

/**
 * SQL: `column` starts with `text`, through its `text_pattern_ops` index (007). Written as a
 * byte-wise range rather than `like 'text%'`, whose pattern a generic plan cannot turn into index
 * bounds: every name that starts with `text` sorts before `text` + U+10FFFF.
 */
function prefix(sql: Sql, column: "name" | "alias", text: string) {
  return sql`(${sql(column)} ~>=~ ${text} and ${sql(column)} ~<~ ${text + "\u{10FFFF}"})`;
}

/**
 * At most this many prefix matches are sorted by image count; from this many on, a suggestion
 * walks the tags in count order instead and stops at the limit (a one-letter prefix matches
 * thousands).
 */
const SORTED_PREFIX_MATCHES = 200;

/**
 * Names of one or two characters' text tested in count order before the index of their
 * characters is asked: enough for a common letter to fill the limit, few enough to read in a
 * fraction of a millisecond (B12).
 */
const WALKED_BY_COUNT = 500;

/**
 * Autocomplete for `text` (a normalised name, without a leading `-`): tags with images whose name
 * or an alias starts with it, by image count, then those containing it elsewhere, by image count.
 * A match through an alias names its target and carries the alias.
 *
 * One statement with one generic plan (planned once per connection: PostgreSQL would otherwise
 * plan each request for its own text, which costs more than running it), whose steps hold for
 * any text:
 * - prefix matches come from the `text_pattern_ops` range, sorted, when there are fewer than
 *   SORTED_PREFIX_MATCHES (counted up to that many in the same index); more are walked in count
 *   order, which soon meets the limit. Either alone had a slow case: sorting every tag for `t`,
 *   walking all 10,000 for `x`;
 * - aliases are matched first and joined to their targets: a plan that walked the tags by count
 *   and probed each for an alias read all 10,000 tags when none matched (bench B12);
 * - other substring matches are looked for only when the prefix matches leave room, so a common
 *   prefix never scans for substrings; from three characters on through the trigram index,
 *   shorter through the index of each name's characters (a letter in no name reads no name).
 */
export async function suggestTags(
  sql: Sql,
  text: string,
  limit: number,
): Promise<TagSuggestion[]> {
  const starts = (column: "name" | "alias") => prefix(sql, column, text);
  const sorted = sql.unsafe(String(SORTED_PREFIX_MATCHES));
  const manyPrefixed = sql`(select count(*) from (
    select from tags where ${starts("name")} limit ${sorted}) f) >= ${sorted}`;
  // Other names containing the text, in the room the prefix matches leave. From three characters
  // on, those the trigram index finds, then sorted (walking by count and testing each name was
  // slow when few or none matched). Shorter texts the trigram index cannot narrow: the first
  // WALKED_BY_COUNT names in count order are tested, and when they hold too few matches, the
  // names holding all of the text's characters (migration 011) are tested and sorted. A letter in
  // no name read all 10,000 names in count order; now WALKED_BY_COUNT and the index.
  const inside = sql`not starts_with(name, ${text}) and image_count > 0`;
  const room = sql`(select n from room)`;
  const order = sql`order by image_count desc, name limit ${room}`;
  const walked = sql.unsafe(String(WALKED_BY_COUNT));
  const contained = [...text].length >= 3
    ? sql`select name, image_count from (
        select name, image_count from tags
        where name like ${"%" + escapeLike(text) + "%"} and ${inside} offset 0) c ${order}`
    : sql`with first as materialized (
        select name, image_count from (
          select name, image_count from tags where image_count > 0
          order by image_count desc, name limit ${walked}) t
        where strpos(name, ${text}) > 0 and ${inside} ${order})
      select * from first where (select count(*) from first) >= ${room}
      union all
      (select name, image_count from (
         select name, image_count from tags
         where tag_name_chars(name) @> tag_name_chars(${text})
           and strpos(name, ${text}) > 0 and ${inside} offset 0) c
       where (select count(*) from first) < ${room} ${order})`;
  const rows = await withGenericPlan(sql, (tx) =>
    tx<(TagSuggestion & { rank: number })[]>`
    with prefixed as materialized (
      (select name, image_count from (
         select name, image_count from tags where ${starts("name")} and image_count > 0
         offset 0) p -- not merged into the sort below: read through the range, then sorted
       where not ${manyPrefixed}
       order by image_count desc, name limit ${limit})
      union all
      (select name, image_count from tags -- starts_with: no range, so walked by count
       where starts_with(name, ${text}) and image_count > 0 and ${manyPrefixed}
       order by image_count desc, name limit ${limit})),
    aliased as materialized (
      select t.name, t.image_count, a.alias, ${starts("alias")} as starts
      from tag_aliases a join tags t on t.id = a.target_id
      where ${substring(sql, "alias", text)} and t.image_count > 0),
    -- How many other substring matches there is room for after the prefix matches.
    room as materialized (
      select greatest(0, ${limit} - (select count(*) from (
        select name from prefixed union select name from aliased where starts) s)) as n),
    contained as materialized (${contained})
    select name, image_count, null as alias, 0 as rank from prefixed
    union all select name, image_count, alias, 1 from aliased where starts
    union all select name, image_count, null, 2 from contained
    union all select name, image_count, alias, 3 from aliased where not starts`);
  // Prefix matches (of a name or an alias) first, each group by image count; a tag found twice
  // is listed once, where it ranks best.
  const seen = new Set<string>();
  return [...rows]
    .sort((a, b) =>
      Number(a.rank >= 2) - Number(b.rank >= 2) || b.image_count - a.image_count ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : a.rank - b.rank)
    )
    .filter((r) => !seen.has(r.name) && seen.add(r.name))
    .slice(0, limit)
    .map((r) =>
      r.alias ? { name: r.name, image_count: r.image_count, alias: r.alias } : {
        name: r.name,
        image_count: r.image_count,
      }
    );
}
