-- compatible: the kind check is widened.
-- The human's answer to what a running turn asks (a permission, a question) is a task too: it
-- goes to the desktop holding the session and never waits behind that turn. Its input holds the
-- request id and the answer.
alter table desktop_task drop constraint desktop_task_kind_check;
alter table desktop_task add constraint desktop_task_kind_check
  check (kind in ('remote_session.create', 'remote_session.send', 'remote_session.respond', 'remote_session.read', 'remote_session.stop'));
