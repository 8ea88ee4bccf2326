-- compatible: a nullable column is added and filled; the release before ignores it.
-- A revocation sticks: a mint no longer clears it (only the owner re-enables the desktop), and the
-- tokens minted before it stay refused for good, re-enabled or not. `tokens_not_before` is the
-- latest revocation; `revoked_at` is cleared by a re-enable only.
alter table desktop_runner add column tokens_not_before timestamptz;
update desktop_runner set tokens_not_before = revoked_at where revoked_at is not null;
