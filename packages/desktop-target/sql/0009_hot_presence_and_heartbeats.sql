-- compatible: two indexes are replaced; the statements are the same, only their plans change.
-- Presence and heartbeats are the most frequent writes (every desktop, every running turn).
-- Kept HOT (heap-only: no index entry written) by indexing none of the columns they change:
-- runners by member without last_seen_at (a member's few runners sort in memory), and claimed
-- tasks by claim time instead of lease expiry (the sweeper reads the live claimed rows, a small
-- set, and checks each lease). Pages keep room for the new row versions.
drop index desktop_runner_member_seen;
create index desktop_runner_member on desktop_runner (organization_id, member_id);
drop index desktop_task_lease;
create index desktop_task_claimed on desktop_task (claimed_at) where state = 'claimed';
alter table desktop_runner set (fillfactor = 85);
alter table desktop_task set (fillfactor = 85);
