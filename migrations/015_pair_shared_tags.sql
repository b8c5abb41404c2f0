-- 015: each near-duplicate pair's count of shared tags, stored and kept exact (issue 39). The
-- duplicates view ordered the pairs by a count computed per pair on every request, a correlated
-- sub-select over image_tags for every pair and then a sort of them all: 2.9-3.5 s at 205,000
-- pairs. Now the order is an index, and a page reads its own rows only (db/similar.ts).

-- Tags two images share, from their rows' tag IDs (migration 010; at most 50 each).
create function shared_tag_count(x bigint[], y bigint[]) returns integer
  language sql immutable parallel safe
  as 'select count(*)::int from unnest(x) t where t = any(y)';

alter table similar_pairs add column shared_tags integer not null default 0
  check (shared_tags >= 0);

update similar_pairs p set shared_tags = shared_tag_count(x.tag_ids, y.tag_ids)
from images x, images y where x.id = p.a and y.id = p.b;

create index similar_pairs_order_idx on similar_pairs (shared_tags desc, distance, a, b);

-- Recounts the pairs of the images `changed`, whose tag IDs this transaction just changed. The
-- pairs are locked first, in key order, and counted by the next statement, which (read committed,
-- a volatile function) takes a fresh snapshot: a transaction that changed the partner's tags and
-- held the pair is committed by then and seen. Two edits of a pair's two images thus recount
-- one after the other, the second with both images' new tags
-- (tests/pair_shared_tags_test.ts 'concurrent tag edits of both images of a pair').
create function recount_shared_tags(changed uuid[]) returns void language plpgsql as $$
begin
  perform 1 from similar_pairs
  where a = any(changed) or b = any(changed) order by a, b for no key update;
  update similar_pairs p set shared_tags = shared_tag_count(x.tag_ids, y.tag_ids)
  from images x, images y
  where (p.a = any(changed) or p.b = any(changed)) and x.id = p.a and y.id = p.b
    and p.shared_tags <> shared_tag_count(x.tag_ids, y.tag_ids);
end $$;

-- 010's triggers, each recounting the pairs of the images whose links changed, after their tag
-- IDs and before the tags' counts (locks: images, pairs, tags, each in key order).
create or replace function image_tags_count_added() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from added) order by id for no key update;
  update images i set tag_ids = i.tag_ids || a.ids
  from (select image_id, array_agg(tag_id order by tag_id) as ids from added group by image_id) a
  where i.id = a.image_id;
  perform recount_shared_tags(array(select distinct image_id from added));
  for r in select tag_id, count(*)::int as n from added group by tag_id order by tag_id loop
    update tags set image_count = image_count + r.n where id = r.tag_id;
  end loop;
  return null;
end $$;

-- A deleted image's links go with it (on delete cascade): its row and its pairs are gone.
create or replace function image_tags_count_removed() returns trigger language plpgsql as $$
declare r record;
begin
  perform 1 from images where id in (select image_id from removed) order by id for no key update;
  update images i set tag_ids = array(
    select t from unnest(i.tag_ids) t where t <> all (gone.ids))
  from (select image_id, array_agg(tag_id) as ids from removed group by image_id) gone
  where i.id = gone.image_id;
  perform recount_shared_tags(array(
    select id from images where id in (select image_id from removed)));
  for r in select tag_id, count(*)::int as n from removed group by tag_id order by tag_id loop
    update tags set image_count = image_count - r.n where id = r.tag_id;
  end loop;
  return null;
end $$;

-- A new pair is counted as it goes in, after both images are locked shared: a transaction that is
-- changing either image's tags (it holds the row) finishes first and the count's fresh snapshot
-- sees it; one that starts later waits for this pair's transaction and then recounts it. A pair
-- whose image was deleted meanwhile is skipped. (tests/pair_shared_tags_test.ts 'a pair recorded
-- while one of its images' tags change')
create function similar_pairs_count_shared() returns trigger language plpgsql as $$
begin
  perform 1 from images where id in (new.a, new.b) order by id for share;
  select shared_tag_count(x.tag_ids, y.tag_ids) into new.shared_tags
  from images x, images y where x.id = new.a and y.id = new.b;
  if not found then
    return null;
  end if;
  return new;
end $$;

create trigger similar_pairs_count_shared before insert on similar_pairs
  for each row execute function similar_pairs_count_shared();
