-- 009: the words printed on an image (issue 21): its caption text, recognised in the background
-- or written by a user, and the words of it that searches look up.
-- `text` is null until recognition has run ("" when it found nothing); `text_source` says whether
-- a person wrote it, which recognition never overwrites.
alter table images
  add column text text,
  add column text_source text,
  add constraint images_text_source_check check (
    (text is null and text_source is null) or (text is not null and text_source in ('ocr', 'manual')));

-- The distinct words of all captions, with how many images carry each, kept exact by the triggers
-- below like tags' counts. A search matches its words against this dictionary (exactly, then by
-- trigram similarity, which finds "facepralm" for "facepalm"), then reads those words' images.
-- Measured at a million captioned images, a trigram index over the whole text instead matched
-- 340,000 rows for a common word and took 1.8 s to rank them; a word's images read from an
-- index in image order stop at the page.
create table caption_words (
  id bigint generated always as identity primary key,
  word text not null unique,
  image_count integer not null default 0 check (image_count >= 0)
);

create index caption_words_trgm_idx on caption_words using gin (word gin_trgm_ops);

-- Which image carries which word, in image order per word (like image_tags).
create table image_words (
  word_id bigint not null references caption_words (id),
  image_seq bigint not null,
  image_id uuid not null references images (id) on delete cascade,
  primary key (word_id, image_seq)
);

-- A candidate's words by its position, for the probes of a search ("does it also carry one of
-- these words?"): one descent, then its few entries; and by its ID, for the cascade on delete.
create index image_words_seq_idx on image_words (image_seq) include (word_id);
create index image_words_image_idx on image_words (image_id);

create function image_words_count_added() returns trigger language plpgsql as $$
declare r record;
begin
  for r in select word_id, count(*)::int as n from added group by word_id order by word_id loop
    update caption_words set image_count = image_count + r.n where id = r.word_id;
  end loop;
  return null;
end $$;

create function image_words_count_removed() returns trigger language plpgsql as $$
declare r record;
begin
  for r in select word_id, count(*)::int as n from removed group by word_id order by word_id loop
    update caption_words set image_count = image_count - r.n where id = r.word_id;
  end loop;
  return null;
end $$;

create trigger image_words_count after insert on image_words
  referencing new table as added for each statement execute function image_words_count_added();
create trigger image_words_uncount after delete on image_words
  referencing old table as removed for each statement execute function image_words_count_removed();
