/**
 * The caption search's cost model (db/caption_search_statement.ts): what each way of finding a
 * level's images costs, in units of one candidate of a walk with its probes, and the bounds of
 * its merge. The statement compares these against the words' and tags' stored counts, in SQL, for
 * every search.
 */

/**
 * What each way of finding a level's images costs, relative to one candidate of a walk with its
 * probes (about 5 µs at a million images): one entry of the shortest posting list among the
 * level's words and tags in the word and tag index (images_words_tags_idx, migration 014); one
 * entry of each longer list, which the index steps through towards the shortest list's next
 * entry; and one image row read and checked after it. Measured at a million images, the index
 * scan alone (EXPLAIN ANALYZE, 60 random pairs of each kind): a word alone 0.144 µs an entry; a
 * word and a tag, or two words, 0.03-0.09 µs an entry of the shorter list and 0.007 µs one of the
 * longer.
 */
export const POSTING_COST = 0.03;
/** One entry of a longer posting list, stepped through (see POSTING_COST). */
export const SKIP_COST = 0.0015;
/** One image row read and checked (see POSTING_COST). */
export const ROW_COST = 0.5;

/**
 * What a candidate of the approximate level's walk costs without tags, relative to one of the
 * exact level's: each is checked for a near spelling of every other word (an entry list against
 * up to 20 spellings) and for not being exact, one walk per spelling. Measured at a million
 * images, 600 of B10's two-word searches one at a time, alternating: at 1 (the exact level's
 * figure) 1,682 shared buffers a search and 3,169-3,854 ms for the 600, at 10 1,306 and
 * 2,602-3,563 ms (3 rounds of 4 faster), the same pages; the largest gaps between the way chosen
 * and the fastest of the ways forced went from 13-16 ms (`pokaka quiverri`: the walk 17.9 ms, the
 * index 6.0) to 3 ms or less. With tags the index reads each image's row for them too and at 10
 * took longer (2,923-3,298 -> 3,136-3,626 ms): 1 there.
 */
export const NEAR_WALK_COST = 10;

/**
 * Up to this ratio between a word's and the rarest tag's image counts, and this many images of
 * both together, a level merges the two lists in image order instead of walking the smaller one
 * and probing each of its images. The merge stops at the page when its plan reads both indexes in
 * order, as at a million images; where the generic estimates are small (the tests' database) it is
 * planned as two sorted bitmap scans, which read both lists whole, and the cap bounds that (at
 * 100,000 images, as at a million, the generic plan reads both indexes in order). At a million
 * images, 600 of B10's word-and-tag searches one at a time: 3.48-3.64 s and 1,261 shared buffers a
 * search at a cap of 50,000, 2.81-2.93 s and 926 at 400,000, 2.97-3.53 s and 922 uncapped (the
 * most popular word and tag have 447,810 images together). Before the walks stopped probing what
 * they walk, 1,500 such searches: 4.38-4.41 s uncapped, 4.50-4.56 s at 50,000, 4.77-4.85 s at
 * 20,000, 4.76-4.78 s walking. Not the listings' TAG_MERGE_MAX_RATIO (db/images.ts): a merge of
 * two tags, whose walk and probes cost otherwise, measured on its own.
 */
export const WORD_TAG_MERGE_MAX_RATIO = 20;
/** Most images of the word and the tag together that a merge reads (see the ratio). */
export const WORD_TAG_MERGE_MAX_IMAGES = 400_000;
/**
 * What one entry of a merge costs, in the same units (about 0.1 µs: both lists read in image
 * order). A merge is taken only when the word and tag index is not cheaper: a word and a tag that
 * rarely meet are read whole by the merge, while the index steps through the longer list.
 */
export const MERGE_ENTRY_COST = 0.03;
