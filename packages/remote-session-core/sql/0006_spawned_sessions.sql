-- Sessions that start sessions. An engine running a remote session carries a session-scoped MCP
-- credential; a create made with it records the calling session as its spawner, the root of the
-- spawner's tree, and its depth (a session a person started is depth 0). Set once, at insert,
-- from the credential the gateway verified: never from a caller's arguments.
alter table remote_session
  add column spawned_by text,
  add column root_id text,
  add column spawn_depth smallint not null default 0 check (spawn_depth between 0 and 64),
  add constraint remote_session_spawn_consistent check ((spawned_by is null) = (root_id is null) and (spawned_by is null) = (spawn_depth = 0));

-- list {spawnedBy}, the live fan-out count of one spawner, and stop {cascade}.
create index remote_session_spawned_by on remote_session (organization_id, spawned_by, created_at desc, id desc) where spawned_by is not null;
