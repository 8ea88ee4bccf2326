-- compatible: a table and a nullable column are added. The release before reads presence from last_seen_at alone, which this release still writes at every stream's open and close: during a rolling deploy shorter than the presence window (10 min) it sees every desktop as before.
-- An idle desktop's wake stream is its presence. Instead of a write per desktop a minute, each
-- process (replica) notes once which runners' streams it holds (`stream_replica`, written in a
-- batch) and proves itself alive with one row (`desktop_replica`) at every flush: a runner held by
-- a replica is seen as of that replica's last flush. A replica that dies stops flushing, so its
-- desktops go offline one presence window after its last flush, as a lone desktop does today.
-- Not scoped to an organization: a replica holds every organization's streams (on a sharded
-- database, a reference table).
create table desktop_replica (
  id text primary key check (id ~ '^rpl_[0-9a-z]{26}$'),
  seen_at timestamptz not null default now()
);
-- No index: the flush and a stream's open and close change it, and the write stays HOT.
alter table desktop_runner add column stream_replica text;
