-- compatible: a column added with a default; the release before never sets it and offers no such task.
-- A create may ask its desktop to run the session in a fresh git worktree of the workspace: the
-- task keeps that, and requires `worktree_v1` of whichever runner takes it. The inventory a
-- desktop reports (its workspaces, their engines and models) stays in desktop_runner.inventory,
-- now from both dialects; a create placed by workspace reads it per member, most recently seen first.
alter table desktop_task add column worktree boolean not null default false;
