-- breaking: primary and foreign keys lead with organization_id and task events require it; the release before writes events without it and conflicts on the old keys.
-- Ready to shard by organization (Citus: each table distributed on organization_id, colocated
-- with remote_session): the organization leads every primary key and foreign key, task events
-- carry it too, and every statement of this package names it.
alter table desktop_task_event drop constraint desktop_task_event_task_id_fkey;
alter table desktop_task drop constraint desktop_task_pkey;
alter table desktop_task add primary key (organization_id, id);
-- The ledger's 0004 dropped the old key to remote_session (id); a database made after it has the
-- new one from 0001 already.
alter table desktop_task drop constraint if exists desktop_task_session_fkey;
alter table desktop_task add constraint desktop_task_session_fkey
  foreign key (organization_id, session_id) references remote_session (organization_id, id) on delete cascade;

alter table desktop_task_event add column organization_id text;
update desktop_task_event e set organization_id = t.organization_id from desktop_task t where t.id = e.task_id;
alter table desktop_task_event alter column organization_id set not null;
alter table desktop_task_event drop constraint desktop_task_event_pkey;
alter table desktop_task_event add primary key (organization_id, task_id, attempt, sequence);
alter table desktop_task_event add constraint desktop_task_event_task_fkey
  foreign key (organization_id, task_id) references desktop_task (organization_id, id) on delete cascade;

alter table desktop_wake drop constraint desktop_wake_pkey;
alter table desktop_wake add primary key (organization_id, id);
