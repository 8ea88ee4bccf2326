-- compatible: a nullable column is added; the release before neither writes nor reads it.
-- The W3C trace context of the call that queued a task (the capability call's span), so the
-- runner's claim, events and completion join that call's trace on whichever replica they land,
-- and the assignment hands it to the runner. Null when nobody records traces.
alter table desktop_task add column trace_parent text check (trace_parent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
