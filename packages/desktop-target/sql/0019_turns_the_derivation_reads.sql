-- compatible: an index is added, and a function is replaced by one that returns fewer of a session's turns; the same state is derived from them by this release and the one before.
-- A completion read every turn of its session (desktop_lock_session), so a session's thousandth
-- turn cost its completion a thousand rows. The derivation (deriveSessionState) needs only: the
-- turns still open (queued or claimed), the newest turn, and the session's create (one per
-- session: its dialect says whether the session's progress is reported). These
-- are read through indexes, whatever the session's length. Newest first, as before.

-- A session's create, found by key: through the (session_id, created_at) index a create is found
-- only after every follow-up is walked past, or by a scan of the whole table, which the planner
-- prefers when one session holds most of it. One entry per session.
create index desktop_task_create on desktop_task (session_id) where kind = 'remote_session.create';

create or replace function desktop_session_turns(p_organization_id text, p_session_id text) returns jsonb
language plpgsql stable as $$
begin
  return (
    select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'state', t.state, 'kind', t.kind,
        'claimed_via', t.claimed_via, 'progress', t.progress) order by t.created_at desc, t.id desc), '[]')
    from (
      (select o.id, o.state, o.kind, o.claimed_via, o.progress->>'status' as progress, o.created_at from desktop_task o
       where o.session_id = p_session_id and o.organization_id = p_organization_id
         and o.state in ('queued', 'claimed') and o.kind in ('remote_session.create', 'remote_session.send'))
      union
      (select n.id, n.state, n.kind, n.claimed_via, n.progress->>'status', n.created_at from desktop_task n
       where n.session_id = p_session_id and n.organization_id = p_organization_id
         and n.kind in ('remote_session.create', 'remote_session.send')
       order by n.created_at desc, n.id desc limit 1)
      union
      (select c.id, c.state, c.kind, c.claimed_via, c.progress->>'status', c.created_at from desktop_task c
       where c.session_id = p_session_id and c.organization_id = p_organization_id and c.kind = 'remote_session.create'
       limit 1)
    ) t);
end
$$;
