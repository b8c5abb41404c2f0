/**
 * Finding images by the words on them (migration 009), exactly or approximately (trigram
 * similarity, so that a recognition slip like "FACEPRALM" is still found by "facepalm"). The
 * statement is built by db/caption_search_statement.ts, whose choices the cost model
 * (db/caption_search_costs.ts) weighs.
 */
import type { Sql } from "./client.ts";
import { withGenericPlan } from "./client.ts";
import { type ImageWithTags, MAX_PAGE_ROWS } from "./images.ts";
import { SIMILARITY_THRESHOLD } from "../domain/caption_text.ts";
import { StatementCache } from "./template.ts";
import { type SearchShape, type SearchSlot, searchStatement } from "./caption_search_statement.ts";

/** How well a result matched: every word exactly, or some approximately. */
export type MatchLevel = 2 | 1;

/** An image found by its caption, with how well it matched. */
export interface CaptionHit extends ImageWithTags {
  level: MatchLevel;
}

/** Where a page of a caption search starts: after this level and `seq`. */
export interface CaptionCursor {
  level: MatchLevel;
  seq: string;
}

/**
 * Most dictionary words one query word may match approximately (the nearest first). A word of a
 * caption slips in few ways; more would only add noise and probes.
 */
export const MAX_CANDIDATES_PER_WORD = 20;

const NO_SEQ = "9223372036854775807";

/**
 * One page of images whose captions carry every word of `words` (from queryWords()), carrying all
 * of `tags` and none of `exclude` (tag names or aliases): first the images where
 * every word matches exactly, then those where some match only approximately, each newest first.
 *
 * Each query word is looked up in the dictionary of caption words, exactly, and for the
 * approximate level its near spellings (at most MAX_CANDIDATES_PER_WORD words): as stored for a
 * word of the dictionary (migration 013), by trigram similarity for any other. Each level's images
 * are found one of two ways, whichever the words' and tags' counts say is cheaper:
 * - a walk in image order that stops at the page, from the rarer of the two drivers: the words
 *   (their images, in image_words (word_id, image_seq)) or the rarest tag (image_tags), with every
 *   other condition probed per candidate, as the tag listings do (db/images.ts). Cheap when the
 *   conditions often meet: the page is found early.
 * - the word and tag index (images_words_tags_idx over word_ids and tag_ids), which intersects the
 *   words' and tags' posting lists in one scan, stepping the longer lists ahead to the shortest
 *   one's next entry, then reads the few images left. Cheap when they rarely meet: a walk would
 *   read the rarer driver to the end (two mid-popularity words, or a word and a tag).
 * The exact level has a third way, taken before the other two when a search has tags, its
 * rarest word's and rarest tag's image counts are within WORD_TAG_MERGE_MAX_RATIO of each other
 * (and WORD_TAG_MERGE_MAX_IMAGES together), and the index is not cheaper: both lists read in image
 * order at once (a merge join, an entry of which costs a small part of a walk's candidate with
 * its probes: MERGE_ENTRY_COST), the other conditions checked on the images both carry.
 * The approximate level is only looked up when the exact one did not fill the page; where both
 * would walk the rarest tag, it checks the images the exact level's walk found not exact instead of
 * walking the tag again. No walk probes what its own entry proves (the walked tag, word or
 * spelling).
 */
export async function searchImagesByCaption(
  sql: Sql,
  opts: {
    words: string[];
    tags: string[];
    exclude: string[];
    limit: number;
    after: CaptionCursor | null;
    /**
     * Each level's way, instead of the cheaper by the counts (tests compare them); `merge` is the
     * exact level's with tags, the other level walking.
     */
    method?: "walk" | "index" | "merge";
  },
): Promise<CaptionHit[]> {
  if (!opts.words.length || opts.limit < 1 || opts.limit > MAX_PAGE_ROWS) {
    throw new RangeError("a text search needs words and a page size");
  }
  const n = opts.words.length;
  const withTags = opts.tags.length > 0;
  // A search by words alone leaves out the tags' steps and branches: each costs its start-up in
  // every execution, skipped or not. With tags the exclusions' probe stays even when there are
  // none: its estimated cost keeps the generic plan's walks as they are (without it, B10's
  // word-and-tag searches merge-joined a word's whole list for a rare tag). Figures: B10 in
  // bench/RESULTS.md#notes-moved-from-code-comments.
  const filtered = withTags || opts.exclude.length > 0;
  const { after } = opts;
  // Level 2 rows come before level 1 rows: after a level 1 cursor there is no level 2 left.
  const before2 = !after ? NO_SEQ : after.level === 2 ? after.seq : "0";
  const before1 = after?.level === 1 ? after.seq : NO_SEQ;
  const shape: SearchShape = { n, withTags, filtered, method: opts.method };
  const values = {
    words: opts.words,
    tags: opts.tags,
    exclude: opts.exclude,
    limit: opts.limit,
    before2,
    before1,
    n,
    threshold: SIMILARITY_THRESHOLD,
    candidates: MAX_CANDIDATES_PER_WORD,
    forced: opts.method === "index",
  };
  // Planned once per connection: PostgreSQL otherwise plans every search for its own words (at a
  // million images planning took longer than running), as the estimates depend on them. The
  // plan's shape is fixed by the statement (materialised steps, one-time conditions), so the
  // generic plan loses nothing; the single-word search got faster (figures in
  // bench/RESULTS.md#notes-moved-from-code-comments).
  return await withGenericPlan(
    sql,
    (sql) => SEARCH_STATEMENTS.query<CaptionHit[]>(sql, shape, values),
  );
}

/** Rendered caption-search statements by shape (db/template.ts). */
const SEARCH_STATEMENTS = new StatementCache<SearchShape, SearchSlot>(
  searchStatement,
);
