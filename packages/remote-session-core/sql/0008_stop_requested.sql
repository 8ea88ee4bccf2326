-- compatible: a column is added; the release before neither reads nor writes it.
-- A stop ends a session's right to start sessions at once, in the statement that records the
-- stop, not when its target has wound the turn down (a desktop's runner cancels later, and until
-- then the ledger still says running). `stop {cascade}` sets it on the whole tree in one
-- statement. A spawn checks it under the spawner's row lock; a new prompt clears it.
alter table remote_session add column stop_requested_at timestamptz;
