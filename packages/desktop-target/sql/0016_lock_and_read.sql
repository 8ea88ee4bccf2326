-- compatible: three new functions; the release before never calls them.
-- A lock, then reads that must see what the lock's last holder committed, as one statement: each
-- statement of a volatile function takes a snapshot of its own (read committed), so a read after
-- the lock inside the function sees the work of the transaction it waited for, as a second
-- statement would. One statement instead of two spares the protocol's round of the second (its
-- Bind, Execute and Sync, and the reply PostgreSQL flushes for each), on the runners' hot path.
-- The bodies resolve names through the caller's search_path, the schema the caller's tables are in.

-- A task the runner claimed, locked for the rest of the transaction; no row for any other task.
create function desktop_lock_own_task(p_organization_id text, p_member_id text, p_runner_id text, p_task_id text)
returns setof desktop_task language sql volatile as $$
  select * from desktop_task
  where id = p_task_id and organization_id = p_organization_id and member_id = p_member_id
    and claimed_by_runner_id = p_runner_id
  for update
$$;

-- What an attempt holds of a batch of events: the sequence it expects next, and its events from
-- p_from on, as [sequence, event] pairs in order. Called after desktop_lock_own_task in one statement.
create function desktop_held_events(p_organization_id text, p_task_id text, p_attempt integer, p_from integer,
  out next integer, out held jsonb)
language sql volatile as $$
  select
    (select coalesce(max(sequence), 0) + 1 from desktop_task_event
     where organization_id = p_organization_id and task_id = p_task_id and attempt = p_attempt),
    (select coalesce(jsonb_agg(jsonb_build_array(sequence, event) order by sequence), '[]') from desktop_task_event
     where organization_id = p_organization_id and task_id = p_task_id and attempt = p_attempt and sequence >= p_from)
$$;

-- A session locked for its move, with its turns (creates and follow-ups, newest first) as the
-- state derivation reads them; no row for a session that is gone.
create function desktop_lock_session(p_organization_id text, p_session_id text, out state text, out turns jsonb)
returns setof record language plpgsql volatile as $$
begin
  select s.state into state from remote_session s
  where s.organization_id = p_organization_id and s.id = p_session_id for update;
  if not found then
    return;
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('state', t.state, 'kind', t.kind, 'claimed_via', t.claimed_via,
      'progress', t.progress->>'status') order by t.created_at desc, t.id desc), '[]')
    into turns from desktop_task t
  where t.organization_id = p_organization_id and t.session_id = p_session_id
    and t.kind in ('remote_session.create', 'remote_session.send');
  return next;
end
$$;
