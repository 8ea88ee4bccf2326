-- A session's turns run one at a time: eligibility asks whether an earlier turn of the same
-- session is still open. Only open turns enter this index, so the check costs the same in a
-- session of 5 turns and in one of 5 000 (the full (session_id, created_at) index walks them all).
create index desktop_task_open_turns on desktop_task (session_id, created_at)
  where state in ('queued', 'claimed') and kind in ('remote_session.create', 'remote_session.send');
