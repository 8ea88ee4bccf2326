-- compatible: two checks are widened to a name's format; every name the release before writes still passes.
-- Runner channels (dialects) are values a host passes to its desktop channel, not a list this
-- package closes: a runner's dialect and the channel a task was claimed through are checked only
-- as names (what `createDialectSet` accepts). A name no dialect of the channel has reads as its
-- default dialect, whose runners then no longer authenticate.
alter table desktop_runner drop constraint desktop_runner_dialect_check;
alter table desktop_runner add constraint desktop_runner_dialect_check check (dialect ~ '^[a-z][a-z0-9-]{0,39}$');
alter table desktop_task drop constraint desktop_task_claimed_via_check;
alter table desktop_task add constraint desktop_task_claimed_via_check check (claimed_via ~ '^[a-z][a-z0-9-]{0,39}$');
