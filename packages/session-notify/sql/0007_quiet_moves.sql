-- compatible: the state-change trigger fires for fewer moves and skips a member nobody tells; each
-- event the release before enqueued is still enqueued, the same way, by the same functions.
-- A move into running or queued has no kind (notify_kind_of_move) and touches notify_waiting only
-- when it leaves waiting_input, so the trigger no longer fires for it: every claimed turn moves its
-- session into running, and that move now costs no trigger call. A state notify_kind_of_move
-- gives a kind to must stay out of the list below. A member with no enabled channel taking the
-- kind is not asked for deliveries: notify_enqueue would keep nothing for them.

create or replace function notify_session_state_change() returns trigger
language plpgsql set search_path from current as $$
declare
  v_kind text := notify_kind_of_move(old.state, new.state, new.last_error->>'error');
begin
  if new.state = 'waiting_input' then
    insert into notify_waiting (organization_id, session_id, entered_at) values (new.organization_id, new.id, now())
    on conflict (organization_id, session_id) do update set entered_at = excluded.entered_at;
  elsif old.state = 'waiting_input' then
    delete from notify_waiting where organization_id = new.organization_id and session_id = new.id;
  end if;
  if v_kind is not null and exists (
    select 1 from notify_channel
    where organization_id = new.organization_id and member_id = new.user_id and enabled and v_kind = any(event_kinds)) then
    perform notify_enqueue(new.organization_id, new.id || ':' || new.state || ':' || (extract(epoch from now()) * 1000000)::bigint,
      v_kind, new.user_id, new.id, new.title, new.state, null, now());
  end if;
  return null;
end
$$;

drop trigger notify_session_state_change on remote_session;
create trigger notify_session_state_change after update of state on remote_session
  for each row when (old.state is distinct from new.state and (new.state not in ('running', 'queued') or old.state = 'waiting_input'))
  execute function notify_session_state_change();
