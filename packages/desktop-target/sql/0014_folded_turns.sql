-- compatible: columns added with defaults; rows without a fold are folded when read.
-- A turn's events are folded as they arrive into what they make (messages with their text and
-- tool calls, the requests waiting on the human), kept on the task: a read loads that, never the
-- turn's events, so its cost follows the turn's text, not how many deltas made it. Rows from
-- before keep null and are folded from their events when read. `event_bytes` is what the task's
-- events take (JSON bytes, every attempt): a turn may store only so much.
alter table desktop_task
  add column folded jsonb,
  add column event_bytes integer not null default 0;
alter table desktop_task alter column folded set default '{"done":[],"open":[],"unattached":[],"current":null,"asked":[]}'::jsonb;
