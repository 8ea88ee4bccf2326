-- compatible: a new function and trigger; the release before neither calls nor fires them.
-- Needs the session ledger's budgets (its migration 0010_budgets) in this schema.
-- A session paused at a budget tells its member `budget_reached`: when its ledger row's
-- budget_pause is set to a pause it did not hold (opened, or one answer's raise left another
-- budget above it reached and the pause moved to that one). The state does not move (a pause shows as
-- waiting_input over whatever its engine is in), so the state-change trigger cannot see it. The
-- event id names the session and the pause's own id: one event per pause, whoever opened it.
create function notify_budget_reached() returns trigger
language plpgsql set search_path from current as $$
begin
  if exists (
    select 1 from notify_channel
    where organization_id = new.organization_id and member_id = new.user_id and enabled and 'budget_reached' = any(event_kinds)) then
    perform notify_enqueue(new.organization_id, new.id || ':budget:' || (new.budget_pause->>'id'),
      'budget_reached', new.user_id, new.id, new.title, 'waiting_input', null, now());
  end if;
  return null;
end
$$;

create trigger notify_budget_reached after update of budget_pause on remote_session
  for each row when (new.budget_pause is not null and (old.budget_pause->>'id') is distinct from (new.budget_pause->>'id'))
  execute function notify_budget_reached();
