-- compatible: an index only; the release before reads the same rows without it.
-- What a session's member was told (a read of a waiting session shows it): the events of one
-- session, found without scanning the organization's.
create index notify_event_session on notify_event (organization_id, session_id, occurred_at);
