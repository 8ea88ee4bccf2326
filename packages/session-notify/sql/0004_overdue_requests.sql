-- compatible: a new function; the release before never calls it.
-- Tells members of sessions still waiting_input p_after after they entered it: once per waiting
-- episode, whichever replica gets there (the episode's row is taken skip locked and deleted, and
-- the event id names the session and when it entered waiting_input). Rows of sessions that left
-- waiting_input meanwhile, or are gone, are dropped. Returns how many were told.
create function notify_enqueue_overdue(p_after interval, p_limit integer) returns integer
language plpgsql set search_path from current as $$
declare
  v_due record;
  v_told integer := 0;
begin
  for v_due in
    with due as (
      select organization_id, session_id, entered_at from notify_waiting
      where entered_at <= now() - p_after
      order by entered_at limit p_limit for update skip locked),
    taken as (
      delete from notify_waiting w using due
      where w.organization_id = due.organization_id and w.session_id = due.session_id
      returning w.organization_id, w.session_id, w.entered_at)
    select t.organization_id, t.session_id, t.entered_at, s.user_id, s.title
    from taken t join remote_session s on s.organization_id = t.organization_id and s.id = t.session_id
    where s.state = 'waiting_input'
  loop
    perform notify_enqueue(v_due.organization_id,
      v_due.session_id || ':overdue:' || (extract(epoch from v_due.entered_at) * 1000000)::bigint,
      'request_overdue', v_due.user_id, v_due.session_id, v_due.title, 'waiting_input', null, now());
    v_told := v_told + 1;
  end loop;
  return v_told;
end
$$;
