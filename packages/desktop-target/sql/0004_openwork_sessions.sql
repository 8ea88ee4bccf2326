-- compatible: the kind check is widened, the new columns are nullable, an index is added.
-- Remote sessions on OpenWork desktops, in the same task store: a create task is OpenWork's
-- command, send / read / stop tasks are its requests (relayed to the desktop that holds the
-- session), and the desktop's progress reports are kept on the command.
alter table desktop_task drop constraint desktop_task_kind_check;
alter table desktop_task add constraint desktop_task_kind_check
  check (kind in ('remote_session.create', 'remote_session.send', 'remote_session.read', 'remote_session.stop'));

alter table desktop_task
  -- Which runner channel the task was claimed through ('openwork' or ours, null before a claim).
  add column claimed_via text check (claimed_via in ('desktop-runner', 'openwork')),
  -- A read's or stop's input (from, cursor, limit; messageId), as the desktop receives it.
  add column input jsonb,
  -- The latest accepted progress report of a delivered command, and its desktop-clock watermark.
  add column progress jsonb,
  add column progress_observed_at bigint;

-- The sweeper's look for OpenWork desktops gone quiet mid-turn (they hold no lease): delivered
-- commands whose turn still runs, by the desktop that holds them.
create index desktop_task_openwork_live on desktop_task (organization_id, member_id, claimed_by_runner_id)
  where kind = 'remote_session.create' and state = 'done' and claimed_via = 'openwork'
    and coalesce(progress->>'status', 'running') in ('running', 'waiting');
