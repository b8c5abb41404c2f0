-- 010: each image's tag IDs on its own row (issue 23). A listing returns every image with its
-- tags; reading them through image_tags (image_id) took 50 index descents and 150 heap reads a
-- page: at a million images, 1.2 ms of PostgreSQL's 1.3 ms for a one-tag page (EXPLAIN ANALYZE:
-- 0.05 ms without the tags). From the row, the names and counts are 150 probes of tags' primary
-- key, about half of that. image_tags stays the truth that filters use; this copy is kept exact
-- by the same statement triggers that keep the counts, in the same transaction.
alter table images add column tag_ids bigint[] not null default '{}';

update images i set tag_ids = l.ids
from (select image_id, array_agg(tag_id order by tag_id) as ids from image_tags group by image_id) l
where i.id = l.image_id;

-- The images' rows before the tags' rows, each in ID order: a statement that links a tag to many
-- images (an implication's batch) and a tag edit that holds one image's row and then counts a tag
-- cannot wait on each other in a cycle.
create or replace function image_tags_count_added() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from added) order by id for no key update;
  update images i set tag_ids = i.tag_ids || a.ids
  from (select image_id, array_agg(tag_id order by tag_id) as ids from added group by image_id) a
  where i.id = a.image_id;
  for r in select tag_id, count(*)::int as n from added group by tag_id order by tag_id loop
    update tags set image_count = image_count + r.n where id = r.tag_id;
  end loop;
  return null;
end $$;

-- A deleted image's links go with it (on delete cascade): its row is gone, nothing to update.
create or replace function image_tags_count_removed() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from removed) order by id for no key update;
  update images i set tag_ids = array(
    select t from unnest(i.tag_ids) t where t <> all (gone.ids))
  from (select image_id, array_agg(tag_id) as ids from removed group by image_id) gone
  where i.id = gone.image_id;
  for r in select tag_id, count(*)::int as n from removed group by tag_id order by tag_id loop
    update tags set image_count = image_count - r.n where id = r.tag_id;
  end loop;
  return null;
end $$;
