-- compatible: the new checks accept every row the release before writes (webhook with a secret, email without); a channel of a kind it has no notifier for is listed, and its deliveries stay pending there.
-- Channel kinds are values a host passes in (its notifiers): SQL checks only the format of a
-- kind's name. Which kinds keep a secret is each notifier's rule (its channels.accept, checked
-- when a member creates a channel; the webhook notifier also refuses to send without one), so
-- SQL says only what holds for every kind: a secret, when there is one, is short and not empty.
-- One statement: the table is locked and checked once.
alter table notify_channel
  drop constraint notify_channel_kind_check,
  drop constraint notify_channel_check,
  add constraint notify_channel_kind_check check (kind ~ '^[a-z][a-z0-9_-]{0,39}$'),
  add constraint notify_channel_secret_check check (length(secret) between 1 and 500);
