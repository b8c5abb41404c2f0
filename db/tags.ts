/**
 * Tags: the tag list. Tags are created where they are linked (db/images.ts); their counts are
 * kept by triggers (001).
 */
import type { ListTagsQuery, TagDto } from "../lib/types.ts";
import type { Sql } from "./client.ts";

/** Escapes LIKE's wildcards so a search matches only the literal text. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}

/** The tag list: tags that have images, filtered and ordered as asked. */
export function listTags(sql: Sql, q: ListTagsQuery): Promise<TagDto[]> {
  const minCount = Math.max(1, q.min_count ?? 1);
  // Names are stored lower-cased and q arrives lower-cased. From three characters on, the trigram
  // index narrows the rows; below that it cannot, and a prepared statement's generic plan would
  // still pick it and recheck every tag (9 ms at 10,000 tags), so a plain substring test lets the
  // planner walk the ordered index and stop at `limit` instead (0.2 ms).
  const search = !q.q
    ? sql``
    : [...q.q].length >= 3
    ? sql`and name ilike ${"%" + escapeLike(q.q) + "%"}`
    : sql`and strpos(name, ${q.q}) > 0`;
  const order = q.sort === "count_desc" ? sql`image_count desc, name` : sql`name`;
  return sql<TagDto[]>`
    select name, image_count from tags
    where image_count >= ${minCount} ${search}
    order by ${order}
    limit ${q.limit} offset ${q.offset}`;
}
