-- breaking: capability names in rows are renamed (remote_session_v1 to session_create_v1); the release before finds no runner able to take its tasks.
-- Each runner is served in the dialect it registered with: our protocol ('desktop-runner') or
-- OpenWork's runner channel ('openwork'). Capabilities of our protocol are renamed so they can
-- never be mistaken for OpenWork's (`remote_session_v1` means OpenWork's command protocol).
alter table desktop_runner
  add column dialect text not null default 'desktop-runner' check (dialect in ('desktop-runner', 'openwork')),
  -- Revocation is a tombstone: tokens minted before it are refused (an OpenWork token needs no
  -- row to work, so a deleted row would come back with the next request); a new mint clears it.
  add column revoked_at timestamptz;

update desktop_runner set capabilities = array(
  select case c when 'remote_session_v1' then 'session_create_v1' when 'remote_session_followup_v1' then 'session_followup_v1' else c end
  from unnest(capabilities) as c);

update desktop_task set required_capabilities = array(
  select case c when 'remote_session_v1' then 'session_create_v1' when 'remote_session_followup_v1' then 'session_followup_v1' else c end
  from unnest(required_capabilities) as c);

-- An OpenWork token verifies without a registration (den-api's tokens are stateless): the first
-- request of a runner minted elsewhere records it, knowing only what the token says.
alter table desktop_runner alter column platform drop not null, alter column app_version drop not null;

-- What an OpenWork desktop reports of itself (computers, workspaces, models), replaced whole.
alter table desktop_runner add column inventory jsonb, add column inventory_updated_at timestamptz;
