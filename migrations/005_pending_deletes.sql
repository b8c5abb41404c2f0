-- 005: objects whose image row is gone but which storage has not confirmed deleted yet.
-- The delete writes these in the same transaction that removes the row, so an object is never
-- forgotten even when storage is down at that moment; a sweeper retries until it succeeds.
create table pending_deletes (
  key text primary key,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now()
);

create index pending_deletes_due_idx on pending_deletes (next_attempt_at);
