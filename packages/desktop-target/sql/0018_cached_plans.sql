-- compatible: three functions are replaced by ones that answer the same for the same arguments; only how PostgreSQL plans them changes.
-- Before PostgreSQL 18, the statement of a SQL-language function that is not inlined is parsed
-- and planned again at every call; a PL/pgSQL function keeps its statements' plans for the
-- connection. On PostgreSQL 15 these three cost a completion ~1 ms of the backend's time, most of
-- it planning (measured: a 1-runner drain, `pnpm statement-cost` with DATABASE_URL). The bodies
-- are those of 0016 and 0017. A volatile PL/pgSQL function takes a snapshot for each statement
-- as a volatile SQL one does, so a read after the lock still sees what the lock's last holder
-- committed.

create or replace function desktop_lock_own_task(p_organization_id text, p_member_id text, p_runner_id text, p_task_id text)
returns setof desktop_task language plpgsql volatile as $$
begin
  return query
    select * from desktop_task t
    where t.id = p_task_id and t.organization_id = p_organization_id and t.member_id = p_member_id
      and t.claimed_by_runner_id = p_runner_id
    for update;
end
$$;

create or replace function desktop_held_events(p_organization_id text, p_task_id text, p_attempt integer, p_from integer,
  out next integer, out held jsonb)
language plpgsql volatile as $$
begin
  -- One statement, so both read one snapshot, as the SQL body did.
  select
    (select coalesce(max(e.sequence), 0) + 1 from desktop_task_event e
     where e.organization_id = p_organization_id and e.task_id = p_task_id and e.attempt = p_attempt),
    (select coalesce(jsonb_agg(jsonb_build_array(e.sequence, e.event) order by e.sequence), '[]') from desktop_task_event e
     where e.organization_id = p_organization_id and e.task_id = p_task_id and e.attempt = p_attempt and e.sequence >= p_from)
  into next, held;
end
$$;

create or replace function desktop_session_turns(p_organization_id text, p_session_id text) returns jsonb
language plpgsql stable as $$
begin
  return (
    select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'state', t.state, 'kind', t.kind,
        'claimed_via', t.claimed_via, 'progress', t.progress->>'status') order by t.created_at desc, t.id desc), '[]')
    from desktop_task t
    where t.organization_id = p_organization_id and t.session_id = p_session_id
      and t.kind in ('remote_session.create', 'remote_session.send'));
end
$$;
