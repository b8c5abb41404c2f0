-- 015: accounts (issue 42): users with roles, invites, personal API keys, favourites, who
-- uploaded each image, and the audit log. Nothing existing changes meaning: images keep working
-- with uploaded_by null and favorite_count 0. The configured admin's row is made at start-up
-- (services/accounts.ts), since only the configuration knows its name.
create table users (
  id bigint generated always as identity primary key,
  username text not null,
  -- scrypt$N$r$p$salt$hash (base64); null for the configured admin, whose password is the
  -- configuration's, and for no one else.
  password_hash text,
  role text not null check (role in ('admin', 'member')),
  disabled boolean not null default false,
  -- Bumped by sign-out-everywhere and by disabling: a token carrying an older generation (or none,
  -- which counts as 0) is refused.
  token_generation integer not null default 0,
  created_at timestamptz not null default now()
);
create unique index users_username_idx on users (lower(username));

create table invites (
  code text primary key,
  role text not null check (role in ('admin', 'member')),
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  used_by bigint references users (id) on delete set null
);
create index invites_open_idx on invites (created_at desc) where used_at is null;

create table api_keys (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  name text not null,
  -- SHA-256 of the key, hex: the key itself is shown once and never stored.
  key_hash text not null unique,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_user_idx on api_keys (user_id, id) where revoked_at is null;

alter table images add column uploaded_by bigint references users (id) on delete set null;
-- Stored and kept exact by the triggers below: never a COUNT per request.
alter table images add column favorite_count integer not null default 0
  check (favorite_count >= 0);
-- `?uploader=`: that person's images, newest first, straight from the index.
create index images_uploaded_by_seq_idx on images (uploaded_by, seq desc)
  where uploaded_by is not null;

create table favorites (
  user_id bigint not null references users (id) on delete cascade,
  image_id uuid not null references images (id) on delete cascade,
  -- Favourited order: the keyset of `GET /me/favorites`, most recent first.
  seq bigint generated always as identity,
  created_at timestamptz not null default now(),
  primary key (user_id, image_id)
);
create index favorites_user_seq_idx on favorites (user_id, seq desc);
create index favorites_image_idx on favorites (image_id);

create function favorites_count_added() returns trigger language plpgsql as $$
begin
  update images i set favorite_count = i.favorite_count + a.n
  from (select image_id, count(*)::int as n from added group by image_id) a
  where i.id = a.image_id;
  return null;
end $$;

create function favorites_count_removed() returns trigger language plpgsql as $$
begin
  -- An image being deleted takes its favourites with it; its row is gone, so nothing updates.
  update images i set favorite_count = i.favorite_count - r.n
  from (select image_id, count(*)::int as n from removed group by image_id) r
  where i.id = r.image_id;
  return null;
end $$;

create trigger favorites_count after insert on favorites
  referencing new table as added for each statement execute function favorites_count_added();
create trigger favorites_uncount after delete on favorites
  referencing old table as removed for each statement execute function favorites_count_removed();

create table audit_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  -- The username at the time (kept as text: the log outlives renames and deleted rows).
  actor text not null,
  -- The API key's name when one was used, else null (a signed-in session).
  via text,
  action text not null,
  target text,
  detail jsonb not null default '{}'
);
