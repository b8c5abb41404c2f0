-- 014: one GIN index over each image's caption word IDs and tag IDs together, in place of one
-- index for each (migration 012; issue 21). A caption search for a word and a tag that rarely
-- meet read both lists from their own indexes whole and ANDed the two bitmaps: a word of 36,478
-- images with a tag of 987 took 6.7 ms for the word's bitmap alone (EXPLAIN ANALYZE, a million
-- images). One index scan with both conditions intersects the lists as it reads them, stepping
-- the longer one ahead to the shorter one's next entry: 0.44 ms for the same pair, as two words in
-- one `@>` already were. Smaller, too: 28 MB at a million images against 17 + 33 MB.
create index images_words_tags_idx on images using gin (word_ids, tag_ids) with (fastupdate = off);
drop index images_word_ids_idx;
drop index images_tag_ids_idx;
