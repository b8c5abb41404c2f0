-- 006: the login limiter's state, one row per client address, shared by every replica.
create table login_failures (
  ip text primary key,
  failures integer not null default 0,
  window_started_at timestamptz not null default now(),
  locked_until timestamptz
);

create index login_failures_window_idx on login_failures (window_started_at);
