-- 021: the caption words by how many images carry them, so that the chat autocomplete
-- (db/caption_suggest.ts) completes a common beginning by walking the most used words and stopping
-- at the first few that start with it, rather than reading and sorting every word in its prefix
-- range, thousands for two letters in a large dictionary (bench B14, autocomplete row).
--
-- image_count is now indexed, so a count change is no longer a heap-only update: each caption
-- write updates the indexes of its words' rows. Captions are written once per upload and on
-- correction, so that cost is paid at the rate of writes, not of keystrokes.
create index caption_words_count_idx on caption_words (image_count desc, word) include (id);
