-- Presence follows our runners' wake streams: when a runner's last stream closes it is offline at
-- once (not only when the presence window passes); its next request brings it back.
alter table desktop_runner add column disconnected_at timestamptz;
