-- Where a member wants to be told, and of what: the member sets these, never the model.
create table notify_channel (
  organization_id text not null,
  id text not null check (id ~ '^nch_[0-9a-z]{26}$'),
  member_id text not null,
  kind text not null check (kind in ('webhook', 'email')),
  target text not null check (length(target) <= 2000),
  -- A webhook's signing secret (whsec_...); an email channel has none.
  secret text check ((kind = 'webhook') = (secret is not null)),
  event_kinds text[] not null,
  -- Whether prompt and answer text may leave in this channel's notifications (titles and states always may).
  allow_text boolean not null default false,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);
create index notify_channel_member on notify_channel (organization_id, member_id);

-- One event a member can be told of, kept once per event id: a second enqueue of the same id is a no-op.
create table notify_event (
  organization_id text not null,
  id text not null check (length(id) <= 200),
  kind text not null,
  member_id text not null,
  session_id text not null,
  title text not null,
  state text not null,
  -- Prompt, question or answer text: sent only to channels that allow text.
  text jsonb,
  occurred_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (organization_id, id)
);

-- The outbox: one row per event and channel, written in the transaction of the state change.
-- A drainer claims due rows (skip locked) by moving next_attempt_at past its lease and stamping
-- claim; only the holder of that claim marks the row sent, retrying or dead.
create table notify_delivery (
  organization_id text not null,
  event_id text not null,
  channel_id text not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'dead')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  claim text,
  last_error text check (length(last_error) <= 500),
  sent_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (organization_id, event_id, channel_id),
  foreign key (organization_id, event_id) references notify_event (organization_id, id) on delete cascade,
  foreign key (organization_id, channel_id) references notify_channel (organization_id, id) on delete cascade
);
create index notify_delivery_due on notify_delivery (next_attempt_at) where status = 'pending';
create index notify_delivery_channel on notify_delivery (organization_id, channel_id);
