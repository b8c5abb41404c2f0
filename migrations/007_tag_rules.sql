-- 007: tag aliases and implications (issue 20), and tag counts kept once per statement.

-- An alias is a name that always means its target. Alias names are never tag names: creating an
-- alias moves an existing tag of that name into the target (lib/tags/, db/tags.ts).
create table tag_aliases (
  alias text primary key,
  target_id bigint not null references tags (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index tag_aliases_target_idx on tag_aliases (target_id);
-- Prefix search of aliases (autocomplete), whatever the database's collation.
create index tag_aliases_alias_prefix_idx on tag_aliases (alias text_pattern_ops);

-- `tag_id` implies `implied_id`: adding the tag to an image adds the implied tag too. By ID, so a
-- rename is followed for free.
create table tag_implications (
  tag_id bigint not null references tags (id) on delete cascade,
  implied_id bigint not null references tags (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (tag_id, implied_id),
  check (tag_id <> implied_id)
);
create index tag_implications_implied_idx on tag_implications (implied_id);

-- Prefix search of tags (autocomplete), whatever the database's collation.
create index tags_name_prefix_idx on tags (name text_pattern_ops);

-- Counts were kept by a row trigger: one UPDATE of the tag's row per link. Merging two tags or
-- applying an implication writes thousands of links of one tag in a statement, which made as many
-- versions of that one row. Now each statement updates each tag it touched once, in tag ID order
-- (the order every writer locks tag rows in, so that concurrent writers cannot deadlock).
drop trigger image_tags_count on image_tags;
drop function image_tags_count();

create function image_tags_count_added() returns trigger language plpgsql as $$
declare r record;
begin
  for r in select tag_id, count(*)::int as n from added group by tag_id order by tag_id loop
    update tags set image_count = image_count + r.n where id = r.tag_id;
  end loop;
  return null;
end $$;

create function image_tags_count_removed() returns trigger language plpgsql as $$
declare r record;
begin
  for r in select tag_id, count(*)::int as n from removed group by tag_id order by tag_id loop
    update tags set image_count = image_count - r.n where id = r.tag_id;
  end loop;
  return null;
end $$;

-- The insert trigger keeps the old name: bulk loaders (bench/seed.ts) disable it by that name.
create trigger image_tags_count after insert on image_tags
  referencing new table as added for each statement execute function image_tags_count_added();
create trigger image_tags_uncount after delete on image_tags
  referencing old table as removed for each statement execute function image_tags_count_removed();
