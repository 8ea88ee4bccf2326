-- A create reserves its session row before it asks the target, so that a retry of the same
-- idempotency key finds the same session. `reserved_at` is set while the target has not taken
-- the row yet (no task queued, no worker session bound): such a row is answered by the core
-- itself (read shows it as it is, stop marks it stopped), and one whose create died is removed
-- after a bound. Null once the target took it, and on every row written before this migration.
alter table remote_session add column reserved_at timestamptz;

-- The retention pass finds reservations whose create never finished without scanning the table.
create index remote_session_reserved on remote_session (reserved_at) where reserved_at is not null;
