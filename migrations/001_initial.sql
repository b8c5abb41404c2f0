-- 001: images, tags and the links between them.
create extension if not exists pg_trgm;

create table images (
  id uuid primary key default gen_random_uuid(),
  -- Insertion order: the keyset of "newest first" listings, and copied into image_tags so that
  -- a tag's images can be read in that order straight from an index.
  seq bigint generated always as identity unique,
  hash text not null unique,
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  width integer not null check (width > 0),
  height integer not null check (height > 0),
  created_at timestamptz not null default now()
);

create table tags (
  id bigint generated always as identity primary key,
  name text not null unique,
  -- Stored and kept exact by the triggers below: never a COUNT per request.
  image_count integer not null default 0 check (image_count >= 0)
);

create index tags_name_trgm_idx on tags using gin (name gin_trgm_ops);
create index tags_count_idx on tags (image_count desc, name);

create table image_tags (
  image_id uuid not null references images (id) on delete cascade,
  tag_id bigint not null references tags (id) on delete cascade,
  image_seq bigint not null,
  primary key (image_id, tag_id)
);

create index image_tags_tag_seq_idx on image_tags (tag_id, image_seq desc);

create function image_tags_count() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    update tags set image_count = image_count + 1 where id = new.tag_id;
    return new;
  else
    update tags set image_count = image_count - 1 where id = old.tag_id;
    return old;
  end if;
end $$;

create trigger image_tags_count after insert or delete on image_tags
  for each row execute function image_tags_count();
