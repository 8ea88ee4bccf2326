-- The session ledger: one row per session created through the gateway, whatever its target.
-- Limits match SESSION_LIMITS in src/limits.ts. Valid on PostgreSQL 15 and 18.

create table remote_session (
  id text primary key check (id ~ '^rs_[0-9a-z]{26}$'),
  organization_id text not null check (length(organization_id) between 1 and 160),
  member_id text not null check (length(member_id) between 1 and 160),
  target text not null check (target ~ '^[a-z][a-z0-9_]{0,31}$'),
  title text not null check (length(title) between 1 and 120),
  state text not null check (state in (
    'queued', 'waking', 'running', 'idle', 'waiting_input', 'interrupted', 'expired', 'failed', 'stopped')),
  -- The target's own id of the session (opencode session id, the desktop's local session id).
  target_session_id text check (length(target_session_id) <= 240),
  -- What the target needs to find the session again (worker, workspace, runner). Ids only.
  target_ref jsonb not null default '{}'::jsonb,
  -- The last error of the session as { error, message }: codes and short messages, never prompts.
  last_error jsonb,
  -- Millisecond precision, so the list cursor (a JS Date) names a row exactly.
  created_at timestamptz not null default date_trunc('milliseconds', now()),
  updated_at timestamptz not null default now(),
  last_activity_at timestamptz not null default now()
);

-- list: a member's sessions, newest first, paged by (created_at, id).
create index remote_session_member_recent
  on remote_session (organization_id, member_id, created_at desc, id desc);

-- Exactly-once create/send under retries. The caller's key is stored as a digest, and the
-- arguments only as a digest of their canonical form: prompts never land here.
create table remote_session_idempotency (
  organization_id text not null,
  member_id text not null,
  operation text not null check (operation in ('create', 'send')),
  key_digest text not null check (length(key_digest) = 64),
  args_digest text not null check (length(args_digest) = 64),
  state text not null check (state in ('pending', 'done', 'failed')),
  -- Values fixed at the first attempt and reused by retries (a send's message id), so a retry
  -- after a failure the caller could not see through is recognised by the target.
  reserved jsonb,
  result jsonb,
  claimed_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  primary key (organization_id, member_id, operation, key_digest)
);

-- Fixed-window counters for per-member guards (the create rate limit), shared by all replicas.
create table remote_session_rate_window (
  organization_id text not null,
  member_id text not null,
  bucket text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (organization_id, member_id, bucket, window_start)
);
