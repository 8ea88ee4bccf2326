-- compatible: an index is replaced by one with more keys; the statements are the same, only their plans change.
-- A completion's read of its session's newest turn (desktop_session_turns) filters by session and
-- organization and orders by (created_at, id). On (session_id, created_at) the organization is a
-- filter and the id a sort, so on statistics that lag a growing table the planner ANDed the
-- session's entries with the organization's range of the primary key: every task of the
-- organization read, per completion (0.06 ms at 2 000 tasks, growing with the organization).
-- With both keys and the order in the index, the newest turn is one backward step whatever the
-- statistics say. Every statement on a session's tasks names its organization, so the new index
-- serves them all, and the cascade from remote_session too.
drop index desktop_task_session;
create index desktop_task_session on desktop_task (session_id, organization_id, created_at, id);
