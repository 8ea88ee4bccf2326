-- breaking: the primary key becomes (organization_id, member_id, runner_id); the release before upserts runners on runner_id alone.
-- A runner id is scoped to its owner: another member registering the same id gets a runner of
-- their own and learns nothing about the first (no 409 that tells an id exists, no squatting).
alter table desktop_runner drop constraint desktop_runner_pkey;
alter table desktop_runner add primary key (organization_id, member_id, runner_id);
