-- 013: each dictionary word's near spellings, found once when the word is new (issue 21). A caption
-- search looks up each query word's near spellings for its approximate level ("facepralm" for
-- "facepalm"). By trigram similarity over the whole dictionary that took 1-2 ms a word at a million
-- captioned images (56,000 words of syllables that share trigrams), up to a third of a two-word
-- search. A word of the dictionary now reads its neighbours from here; a query word that is no
-- caption's word still takes the trigram lookup (db/captions.ts).
--
-- Symmetric: a new word is stored with each near spelling both ways. The threshold is the search's
-- (domain/caption_text.ts SIMILARITY_THRESHOLD; a test holds the two equal).
create function caption_neighbour_threshold() returns real language sql immutable
  as 'select 0.5::real';

create table caption_word_neighbours (
  word_id bigint not null references caption_words (id) on delete cascade,
  near_id bigint not null references caption_words (id) on delete cascade,
  similarity real not null,
  primary key (word_id, near_id)
);
create index caption_word_neighbours_near_idx on caption_word_neighbours (near_id);

-- The near spellings of the words just added, among all words the statement sees, both ways.
-- Two transactions that each add a word near the other's would not see each other's uncommitted
-- word: writers that add words take an advisory lock first (db/caption_words.ts), so the second
-- runs this after the first has committed. `%` with the threshold set for this function only
-- (the writers' sessions keep pg_trgm's default); similarity() checks it exactly.
create function caption_words_neighbours_added() returns trigger language plpgsql
  set pg_trgm.similarity_threshold = 0.5 as $$
begin
  insert into caption_word_neighbours (word_id, near_id, similarity)
  select n.word_id, n.near_id, n.similarity from (
    select a.id as word_id, c.id as near_id, similarity(a.word, c.word) as similarity
    from added a join caption_words c on c.word % a.word and c.id <> a.id
    where similarity(a.word, c.word) >= caption_neighbour_threshold()) p
  cross join lateral (values (p.word_id, p.near_id, p.similarity),
                             (p.near_id, p.word_id, p.similarity)) n(word_id, near_id, similarity)
  order by 1, 2
  on conflict do nothing;
  return null;
end $$;

create trigger caption_words_neighbours after insert on caption_words
  referencing new table as added for each statement
  execute function caption_words_neighbours_added();

-- The words already there.
set local pg_trgm.similarity_threshold = 0.5;
insert into caption_word_neighbours (word_id, near_id, similarity)
select a.id, c.id, similarity(a.word, c.word)
from caption_words a join caption_words c on c.word % a.word and c.id <> a.id
where similarity(a.word, c.word) >= caption_neighbour_threshold();
