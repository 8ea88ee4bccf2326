-- Push over MCP resource subscriptions: the gateway stays a set of stateless replicas, so what a
-- stateful Streamable HTTP session holds lives here. Any replica answers any request of a session;
-- the one holding its GET stream watches its subscriptions and delivers its events.
create table mcp_session (
  id text primary key check (id ~ '^mcps_[0-9a-z]{26}$'),
  organization_id text not null,
  user_id text not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index mcp_session_seen on mcp_session (last_seen_at);

-- A `remote-session://<id>` resource a session subscribed to, with the fingerprint of what was
-- last announced: a change is announced once, by whichever replica sees it first.
create table mcp_subscription (
  mcp_session_id text not null references mcp_session (id) on delete cascade,
  uri text not null check (length(uri) <= 200),
  remote_session_id text not null,
  fingerprint text not null,
  created_at timestamptz not null default now(),
  primary key (mcp_session_id, uri)
);

-- The session's server-to-client messages in order: a stream resumed with Last-Event-ID replays
-- what came after it. Bounded by age and count per session (retention).
create table mcp_push_event (
  id bigserial primary key,
  mcp_session_id text not null references mcp_session (id) on delete cascade,
  message jsonb not null,
  created_at timestamptz not null default now()
);
create index mcp_push_event_session on mcp_push_event (mcp_session_id, id);
create index mcp_push_event_age on mcp_push_event (created_at);
