-- compatible: the operation check is widened; every row the release before writes still passes it.
-- Answers to a session's permission or question requests are exactly-once too: a second
-- identical answer replays the first, a different one is refused.
alter table remote_session_idempotency drop constraint remote_session_idempotency_operation_check;
alter table remote_session_idempotency
  add constraint remote_session_idempotency_operation_check check (operation in ('create', 'send', 'respond'));
