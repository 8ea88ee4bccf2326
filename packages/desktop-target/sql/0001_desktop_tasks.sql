-- Desktop target: runners, remote-session tasks and their events, and wake-up hints.
-- Runs after remote-session-core's ledger migration. Valid on PostgreSQL 15 and 18.
-- These tables are remote-session work only: nothing here is an automation run, and no
-- automation listing reads them.

create table desktop_runner (
  runner_id text primary key check (length(runner_id) between 8 and 160),
  organization_id text not null check (length(organization_id) between 1 and 160),
  member_id text not null check (length(member_id) between 1 and 160),
  name text not null check (length(name) between 1 and 120),
  platform text not null check (platform in ('darwin', 'win32', 'linux')),
  app_version text not null check (length(app_version) between 1 and 80),
  protocol_version integer not null check (protocol_version >= 1),
  capabilities text[] not null default '{}',
  last_seen_at timestamptz not null default now(),
  created_at timestamptz not null default now()
);
create index desktop_runner_member_seen on desktop_runner (organization_id, member_id, last_seen_at desc);

create table desktop_task (
  id text primary key check (id ~ '^rst_[0-9a-z]{26}$'),
  organization_id text not null,
  member_id text not null,
  -- The ledger's key is (organization_id, id) since its 0004, which always runs before this
  -- file; databases made before that got this key from 0010 instead.
  session_id text not null,
  kind text not null check (kind in ('remote_session.create', 'remote_session.send')),
  state text not null check (state in ('queued', 'claimed', 'done', 'failed', 'cancelled', 'interrupted', 'expired')),
  title text not null check (length(title) between 1 and 120),
  -- The prompt waits here, and only here, until the attempt ends; then it is cleared.
  prompt text check (length(prompt) <= 100000),
  -- Its size outlives it: logs and transcripts show that a prompt was sent, not what it said.
  prompt_chars integer not null default 0,
  model jsonb,
  workspace_id text check (length(workspace_id) <= 240),
  -- send: the gateway's id of the prompt, so a runner can tell a replay.
  message_id text check (length(message_id) <= 160),
  local_session_id text check (length(local_session_id) <= 240),
  -- Only this runner may take the task (the chosen or pinned desktop); null: any of the member's.
  pinned_runner_id text,
  claimed_by_runner_id text,
  required_protocol integer not null,
  required_capabilities text[] not null,
  attempt integer not null default 0,
  lease_expires_at timestamptz,
  deliver_by timestamptz,
  claim_deadline timestamptz not null,
  cancel_requested boolean not null default false,
  completion jsonb,
  failure_code text check (length(failure_code) <= 60),
  failure_message text check (length(failure_message) <= 2000),
  created_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default now(),
  claimed_at timestamptz,
  finished_at timestamptz,
  constraint desktop_task_session_fkey
    foreign key (organization_id, session_id) references remote_session (organization_id, id) on delete cascade
);
create index desktop_task_queued on desktop_task (organization_id, member_id, created_at) where state = 'queued';
create index desktop_task_lease on desktop_task (lease_expires_at) where state = 'claimed';
create index desktop_task_deadline on desktop_task (claim_deadline) where state = 'queued';
create index desktop_task_session on desktop_task (session_id, created_at);

create table desktop_task_event (
  task_id text not null references desktop_task (id) on delete cascade,
  attempt integer not null,
  sequence integer not null check (sequence >= 1),
  type text not null,
  -- The event exactly as posted, so a replay can be compared with it.
  event jsonb not null,
  received_at timestamptz not null default now(),
  primary key (task_id, attempt, sequence)
);

-- Wake-up hints, kept briefly so a reconnecting stream can resume after Last-Event-ID.
create table desktop_wake (
  id bigserial primary key,
  organization_id text not null,
  member_id text not null,
  runner_id text,
  task_id text not null,
  created_at timestamptz not null default now()
);
create index desktop_wake_member on desktop_wake (organization_id, member_id, id);
