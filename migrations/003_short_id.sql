-- 003: the short ID that replaces the UUID in URLs and keys. Nullable until the backfill
-- (the step after this one) has given every existing image one; 004 makes it required.
alter table images add column short_id text unique
  check (short_id ~ '^[0-9A-Za-z]{8}$');

-- The backfill's plan: the short ID chosen for each image before its objects are copied, so a
-- run that dies half-way is finished by the next one with the same IDs and the same keys.
create table short_id_backfill (
  image_id uuid primary key references images (id) on delete cascade,
  short_id text not null unique
);
