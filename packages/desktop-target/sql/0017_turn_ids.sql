-- compatible: a function is added and one is replaced by one whose turns carry one key more; the release before ignores it.
-- A session's turns name their task: a completion locks its task and the task's session in its
-- first statement, then derives the session's move from the turns as its own settle changes them
-- (that turn's state replaced), instead of locking and reading the session again after the settle.

-- A session's turns (creates and follow-ups, newest first) as the state derivation reads them.
create function desktop_session_turns(p_organization_id text, p_session_id text) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'state', t.state, 'kind', t.kind,
      'claimed_via', t.claimed_via, 'progress', t.progress->>'status') order by t.created_at desc, t.id desc), '[]')
  from desktop_task t
  where t.organization_id = p_organization_id and t.session_id = p_session_id
    and t.kind in ('remote_session.create', 'remote_session.send')
$$;

-- As in 0016: the state is the locked row's, the turns are read after the lock (a snapshot of their own).
create or replace function desktop_lock_session(p_organization_id text, p_session_id text, out state text, out turns jsonb)
returns setof record language plpgsql volatile as $$
begin
  select s.state into state from remote_session s
  where s.organization_id = p_organization_id and s.id = p_session_id for update;
  if found then
    turns := desktop_session_turns(p_organization_id, p_session_id);
    return next;
  end if;
end
$$;
