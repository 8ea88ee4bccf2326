-- compatible: an index only; the release before neither reads nor needs it.
-- The budgeted turns running: a gateway that starts follows again those of its targets that check
-- a budget as each step ends (a cloud turn's follower lived in the process that stopped).
create index remote_session_budgeted_running on remote_session (target, last_activity_at) where budgeted and state = 'running' and budget_pause is null;
