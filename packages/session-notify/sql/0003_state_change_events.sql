-- compatible: new functions, a table and a trigger; the release before neither calls nor reads them, and its enqueues keep working.
-- Needs the session ledger's remote_session in this schema (migrateSessionNotify checks it first).
-- Each function keeps the search_path of this migration, so it finds the notify tables whoever's
-- transaction fires it.

-- The one fan-out of an event: one delivery per enabled channel of the member that takes its kind.
-- An id already kept is a no-op (duplicate); an event no channel takes is not kept; its text only
-- when one of those channels allows text. Called by enqueueNotification and by the triggers below.
create function notify_enqueue(
  p_organization_id text, p_id text, p_kind text, p_member_id text, p_session_id text,
  p_title text, p_state text, p_text jsonb, p_occurred_at timestamptz,
  out deliveries integer, out duplicate boolean)
language sql set search_path from current as $$
  with channels as (
    select id, allow_text from notify_channel
    where organization_id = p_organization_id and member_id = p_member_id and enabled and p_kind = any(event_kinds)),
  earlier as (
    select 1 from notify_event where organization_id = p_organization_id and id = p_id),
  event as (
    insert into notify_event (organization_id, id, kind, member_id, session_id, title, state, text, occurred_at)
    select p_organization_id, p_id, p_kind, p_member_id, p_session_id, p_title, p_state,
      case when exists (select 1 from channels where allow_text) then p_text end, p_occurred_at
    where exists (select 1 from channels)
    on conflict (organization_id, id) do nothing
    returning organization_id, id),
  delivered as (
    insert into notify_delivery (organization_id, event_id, channel_id)
    select e.organization_id, e.id, c.id from event e cross join channels c
    returning channel_id)
  select (select count(*) from delivered)::int, exists (select 1 from earlier)
$$;

-- Sessions waiting for their member, since when: the overdue scan's work list. A row per waiting
-- episode; it goes when the session leaves waiting_input (or when the scan has told the member).
create table notify_waiting (
  organization_id text not null,
  session_id text not null,
  entered_at timestamptz not null,
  primary key (organization_id, session_id)
);
create index notify_waiting_entered on notify_waiting (entered_at);

-- What a move of a session's state tells its member, by the state it enters. A task that expired
-- leaves its error code in last_error: delivery_deadline_passed (its deliverBy passed) or
-- runner_unavailable (no desktop took it in time); a lost desktop leaves lease_lost or desktop_lost.
create function notify_kind_of_move(p_from text, p_to text, p_error text) returns text
language sql immutable as $$
  select case
    when p_to = 'waiting_input' then 'waiting_input'
    when p_to = 'idle' and p_from in ('running', 'waiting_input', 'interrupted') then 'turn_idle'
    when p_to = 'expired' then 'task_expired'
    when p_to in ('failed', 'interrupted') and p_error in ('delivery_deadline_passed', 'runner_unavailable') then 'task_expired'
    when p_to = 'failed' then 'turn_failed'
    when p_to = 'stopped' then 'turn_stopped'
    when p_to = 'interrupted' then 'desktop_lost'
  end
$$;

-- Every writer of remote_session.state (the ledger, the desktop target's in-transaction moves, the
-- cloud target) enqueues through this, in its own transaction. The event id names the session,
-- the state and the transaction's timestamp: a transaction that rolled back wrote nothing, and one
-- that moves a session into one state twice tells it once.
create function notify_session_state_change() returns trigger
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
  if v_kind is not null then
    perform notify_enqueue(new.organization_id, new.id || ':' || new.state || ':' || (extract(epoch from now()) * 1000000)::bigint,
      v_kind, new.user_id, new.id, new.title, new.state, null, now());
  end if;
  return null;
end
$$;

create trigger notify_session_state_change after update of state on remote_session
  for each row when (old.state is distinct from new.state) execute function notify_session_state_change();
