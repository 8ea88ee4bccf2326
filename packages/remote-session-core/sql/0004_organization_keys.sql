-- breaking: the primary key becomes (organization_id, id) and foreign keys to it go until desktop-target's 0010; the release before conflicts on id alone.
-- Ready to shard by organization (Citus: create_distributed_table('remote_session',
-- 'organization_id')): the organization leads every key, so all of one organization's rows live
-- on one shard and every statement names it. Ids stay random and unique in practice; the
-- database no longer promises it across organizations, and nothing relies on that.
-- `cascade` drops foreign keys other packages' tables point here with (the desktop target's
-- tasks); their own next migration adds them back on (organization_id, id).
alter table remote_session drop constraint remote_session_pkey cascade;
alter table remote_session add primary key (organization_id, id);
