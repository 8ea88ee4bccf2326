-- compatible: columns are added null or with defaults; the release before neither reads nor writes them.
-- Budgets. A session may hold a budget of its own (tokens, micro-dollars, running time: null where
-- it sets none); every spend in its tree below counts against it. `budgeted` marks a session that
-- holds one or sits below one that does, set once at insert, so the sessions of unbudgeted trees
-- skip every budget check. `budget_pause` is the open pause: the budget the session's spend
-- reached, asked of the human as a `budget` request until they raise it or stop the session;
-- `budget_pause_ended` the last one answered, so a second answer to it still raises the budget.
alter table remote_session
  add column budget_tokens bigint,
  add column budget_cost_micros bigint,
  add column budget_running_ms bigint,
  add column budgeted boolean not null default false,
  add column budget_pause jsonb,
  add column budget_pause_ended jsonb;

-- Sends and creates in a tree refuse while one of its sessions is paused: the open pauses of a tree.
create index remote_session_budget_paused on remote_session (organization_id, (coalesce(root_id, id))) where budget_pause is not null;
