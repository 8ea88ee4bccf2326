-- compatible: an index only; the release before neither reads nor needs it.
-- The budgeted sessions, by target: a gateway that starts follows again the running turns among
-- them whose target checks a budget as each step ends (a cloud turn's follower lived in the
-- process that stopped). Keyed and filtered on columns that never change after insert, so the
-- updates a turn makes (its state, its activity) stay heap-only.
create index remote_session_budgeted on remote_session (target) where budgeted;
