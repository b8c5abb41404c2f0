-- 012: each image's caption word IDs on its own row, and GIN indexes over them and over its tag IDs
-- (issue 21). A search for two words (or a word and a tag) that rarely meet walked the rarer one's
-- images to the end, probing each for the other: at a million images, 14-64 ms for a few thousand
-- candidates. The indexes intersect the posting lists instead (0.6 ms for the same two words,
-- EXPLAIN ANALYZE) and leave only the images that carry everything to read. image_words and
-- image_tags stay the truth that walks and counts read; word_ids is kept exact by image_words'
-- statement triggers, in the same transaction, as tag_ids is by image_tags' (migration 010).
--
-- fastupdate off: with the default pending list, every search scans up to 4 MB of unsorted
-- entries until a vacuum merges them, and the write that overflows it merges them all (an upload
-- or a tag edit stalling for the merge). Off, each write updates the index in place: a few
-- entries per image.
alter table images add column word_ids bigint[] not null default '{}';

update images i set word_ids = l.ids
from (select image_id, array_agg(word_id order by word_id) as ids from image_words group by image_id) l
where i.id = l.image_id;

create index images_word_ids_idx on images using gin (word_ids) with (fastupdate = off);
create index images_tag_ids_idx on images using gin (tag_ids) with (fastupdate = off);

-- The images' rows before the dictionary's rows, each in ID order, as for tags (migration 010).
create or replace function image_words_count_added() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from added) order by id for no key update;
  update images i set word_ids = i.word_ids || a.ids
  from (select image_id, array_agg(word_id order by word_id) as ids from added group by image_id) a
  where i.id = a.image_id;
  for r in select word_id, count(*)::int as n from added group by word_id order by word_id loop
    update caption_words set image_count = image_count + r.n where id = r.word_id;
  end loop;
  return null;
end $$;

-- A deleted image's links go with it (on delete cascade): its row is gone, nothing to update.
create or replace function image_words_count_removed() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from removed) order by id for no key update;
  update images i set word_ids = array(
    select w from unnest(i.word_ids) w where w <> all (gone.ids))
  from (select image_id, array_agg(word_id) as ids from removed group by image_id) gone
  where i.id = gone.image_id;
  for r in select word_id, count(*)::int as n from removed group by word_id order by word_id loop
    update caption_words set image_count = image_count - r.n where id = r.word_id;
  end loop;
  return null;
end $$;
