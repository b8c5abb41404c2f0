-- 017: how often each image was sent from a chat or copied from its page (issue 43). One row per
-- image, sender and UTC day: a sender counts once per image per day, however often it sends it.
-- images.send_count is stored and kept by the statement that adds the row (db/sends.ts): never a
-- COUNT per request. It ranks an empty chat search and breaks ties of the relevance order.

alter table images add column send_count integer not null default 0 check (send_count >= 0);

create table image_sends (
  image_id uuid not null references images (id) on delete cascade,
  -- `discord:{user}`, `slack:{team}:{user}`, `telegram:{user}` or `account:{id}`.
  sender text not null,
  day date not null,
  primary key (image_id, sender, day)
);

-- An empty chat search: the most-sent images first, newest among equals.
create index images_send_count_idx on images (send_count desc, seq desc);
