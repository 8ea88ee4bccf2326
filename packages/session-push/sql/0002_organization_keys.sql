-- breaking: primary and foreign keys lead with organization_id, and rows of sessions gone are deleted; the release before conflicts on the old keys.
-- Ready to shard by organization, like the packages' tables: the organization leads every key
-- of the push tables, and every statement names it.
alter table mcp_subscription drop constraint mcp_subscription_mcp_session_id_fkey;
alter table mcp_push_event drop constraint mcp_push_event_mcp_session_id_fkey;
alter table mcp_session drop constraint mcp_session_pkey;
alter table mcp_session add primary key (organization_id, id);

alter table mcp_subscription add column organization_id text;
update mcp_subscription s set organization_id = m.organization_id from mcp_session m where m.id = s.mcp_session_id;
delete from mcp_subscription where organization_id is null;
alter table mcp_subscription alter column organization_id set not null;
alter table mcp_subscription drop constraint mcp_subscription_pkey;
alter table mcp_subscription add primary key (organization_id, mcp_session_id, uri);
alter table mcp_subscription add constraint mcp_subscription_session_fkey
  foreign key (organization_id, mcp_session_id) references mcp_session (organization_id, id) on delete cascade;

alter table mcp_push_event add column organization_id text;
update mcp_push_event e set organization_id = m.organization_id from mcp_session m where m.id = e.mcp_session_id;
delete from mcp_push_event where organization_id is null;
alter table mcp_push_event alter column organization_id set not null;
alter table mcp_push_event drop constraint mcp_push_event_pkey;
alter table mcp_push_event add primary key (organization_id, id);
alter table mcp_push_event add constraint mcp_push_event_session_fkey
  foreign key (organization_id, mcp_session_id) references mcp_session (organization_id, id) on delete cascade;
