-- 002: the storage key of the WebP thumbnail; null when there is none.
alter table images add column thumbnail_key text;
