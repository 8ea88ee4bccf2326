-- compatible: a new nullable column; the release before never reads it. (Its redeem ignores a
-- lease: during a rolling deploy both may answer one link, and respond's own idempotency keeps
-- that to one answer.)
-- The lease of a redeem in flight: set by a short committed claim before the answer is sent (no
-- transaction is held while the session answers), cleared when the answer failed and the link
-- stays usable. While it is in the future, another redeem is refused at once (link_busy) instead
-- of waiting on a row lock; once it lapses (a replica died mid-answer), the link may be redeemed again.
alter table notify_answer_link add column answering_until timestamptz;
