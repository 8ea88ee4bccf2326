-- compatible: notify_enqueue is replaced by one that answers the same for the same arguments; only how PostgreSQL plans it changes.
-- Before PostgreSQL 18, a SQL-language function that is not inlined (a SET clause forbids it) is
-- parsed and planned again at every call; a PL/pgSQL one keeps its statement's plan for the
-- connection. notify_enqueue runs for every event a member's channels take, inside the
-- transaction of the session's move. The body is 0003's, one statement as before.

create or replace function notify_enqueue(
  p_organization_id text, p_id text, p_kind text, p_member_id text, p_session_id text,
  p_title text, p_state text, p_text jsonb, p_occurred_at timestamptz,
  out deliveries integer, out duplicate boolean)
language plpgsql set search_path from current as $$
begin
  with channels as (
    select c.id, c.allow_text from notify_channel c
    where c.organization_id = p_organization_id and c.member_id = p_member_id and c.enabled and p_kind = any(c.event_kinds)),
  earlier as (
    select 1 from notify_event e where e.organization_id = p_organization_id and e.id = p_id),
  event as (
    insert into notify_event as e (organization_id, id, kind, member_id, session_id, title, state, text, occurred_at)
    select p_organization_id, p_id, p_kind, p_member_id, p_session_id, p_title, p_state,
      case when exists (select 1 from channels where allow_text) then p_text end, p_occurred_at
    where exists (select 1 from channels)
    on conflict (organization_id, id) do nothing
    returning e.organization_id, e.id),
  delivered as (
    insert into notify_delivery as d (organization_id, event_id, channel_id)
    select ev.organization_id, ev.id, c.id from event ev cross join channels c
    returning d.channel_id)
  select (select count(*) from delivered)::int, exists (select 1 from earlier)
  into deliveries, duplicate;
end
$$;
