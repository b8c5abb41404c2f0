/**
 * The caption search's cost model (db/caption_search_statement.ts): what each way of finding a
 * level's images costs, in units of one candidate of a walk with its probes, and the bounds of
 * its merge. The statement compares these against the words' and tags' stored counts, in SQL, for
 * every search.
 */

/**
 * What each way of finding a level's images costs, relative to one candidate of a walk with its
 * probes (at a million images): one entry of the shortest posting list among the
 * level's words and tags in the word and tag index (images_words_tags_idx, migration 014); one
 * entry of each longer list, which the index steps through towards the shortest list's next
 * entry; and one image row read and checked after it. The ratios are those of the index scan
 * alone at a million images (EXPLAIN ANALYZE; bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const POSTING_COST = 0.03;
/** One entry of a longer posting list, stepped through (see POSTING_COST). */
export const SKIP_COST = 0.0015;
/** One image row read and checked (see POSTING_COST). */
export const ROW_COST = 0.5;

/**
 * What a candidate of the approximate level's walk costs without tags, relative to one of the
 * exact level's: each is checked for a near spelling of every other word (an entry list against
 * up to 20 spellings) and for not being exact, one walk per spelling. At 10 rather than 1 (the
 * exact level's figure), B10's two-word searches at a million images read fewer buffers, ran
 * faster and the way chosen came closer to the fastest one forced; with tags the index reads each
 * image's row for them too and 10 was slower, so 1 there (B10 in
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const NEAR_WALK_COST = 10;

/**
 * Up to this ratio between a word's and the rarest tag's image counts, and this many images of
 * both together, a level merges the two lists in image order instead of walking the smaller one
 * and probing each of its images. The merge stops at the page when its plan reads both indexes in
 * order, as at a million images; where the generic estimates are small (the tests' database) it is
 * planned as two sorted bitmap scans, which read both lists whole, and the cap bounds that (at
 * 100,000 images, as at a million, the generic plan reads both indexes in order). The cap of
 * 400,000 was the fastest of those B10's word-and-tag searches tried at a million images (B10 in
 * bench/RESULTS.md#notes-moved-from-code-comments). Not the listings' TAG_MERGE_MAX_RATIO
 * (db/images.ts): a merge of two tags, whose walk and probes cost otherwise, measured on its own.
 */
export const WORD_TAG_MERGE_MAX_RATIO = 20;
/** Most images of the word and the tag together that a merge reads (see the ratio). */
export const WORD_TAG_MERGE_MAX_IMAGES = 400_000;
/**
 * What one entry of a merge costs, in the same units (both lists read in image order). A merge is taken only when the word and tag index is not cheaper: a word and a tag that
 * rarely meet are read whole by the merge, while the index steps through the longer list.
 */
export const MERGE_ENTRY_COST = 0.03;
