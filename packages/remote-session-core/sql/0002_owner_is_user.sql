-- breaking: columns renamed (member_id to user_id); the release before still names member_id.
-- Sessions belong to the organization and the creating principal's user id, as OpenWork keys
-- them (research: openwork-wire §4.6); membership is checked on every call, separately. Rows
-- written before this migration were keyed by the member id their host passed: hosts that
-- used a membership id there map it to the user id themselves.
alter table remote_session rename column member_id to user_id;
alter index remote_session_member_recent rename to remote_session_owner_recent;
alter table remote_session_idempotency rename column member_id to user_id;
alter table remote_session_rate_window rename column member_id to user_id;
