-- 004: every image has a short ID from now on.
alter table images alter column short_id set not null;
drop table short_id_backfill;
