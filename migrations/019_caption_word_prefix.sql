-- 019: the words that start with what is typed (the chat autocomplete, db/caption_suggest.ts), by
-- a range of this index as the tags' prefixes are found (007): the trigram index read every word
-- holding the typed letters' trigrams anywhere for a two-letter beginning.
create index caption_words_word_prefix_idx on caption_words (word text_pattern_ops);
