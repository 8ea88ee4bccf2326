-- compatible: columns are added with defaults; the release before neither reads nor writes them.
-- What a session spent, as its engine reported it: tokens in and out, cost in micro-dollars (null
-- until some step was priced), and the wall time of its running turns. Added to by each reported
-- step exactly once (a desktop's events are stored once; a cloud worker's messages are summed),
-- so a tree's spend is the sum of its rows. No check constraints: one would scan the table under
-- its exclusive lock as it is added, and the writers only ever add bounded, non-negative amounts.
alter table remote_session
  add column spent_tokens_in bigint not null default 0,
  add column spent_tokens_out bigint not null default 0,
  add column spent_cost_micros bigint,
  add column spent_running_ms bigint not null default 0,
  add column usage_reported boolean not null default false;
