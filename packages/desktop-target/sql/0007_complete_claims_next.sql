-- Protocol 3: a completion may claim the runner's next task in the same request. The task it
-- claimed is kept with the completed one, so a replayed completion (its answer was lost) hands
-- the runner the same task instead of claiming another.
alter table desktop_task add column next_task_id text;
