-- compatible: a new table; the release before never reads it.
-- One answer link per pending permission or question a notification named: bound to the member
-- and the request, single use, short-lived. The token holds only the random id and its HMAC
-- signature; what the request asks is never kept here.
create table notify_answer_link (
  -- 16 random bytes, base64url. The key alone, not (organization_id, id): a link is opened by its
  -- token, which names no organization; ids are random, so they do not clash across organizations.
  id text primary key check (id ~ '^[A-Za-z0-9_-]{22}$'),
  organization_id text not null check (length(organization_id) between 1 and 200),
  member_id text not null check (length(member_id) between 1 and 200),
  session_id text not null check (length(session_id) between 1 and 200),
  request_id text not null check (length(request_id) between 1 and 200),
  expires_at timestamptz not null,
  -- Set once, by the redeem that answered; a link with it set is refused.
  used_at timestamptz,
  created_at timestamptz not null default now()
);
-- Retention deletes links a while after they expired.
create index notify_answer_link_expiry on notify_answer_link (expires_at);
