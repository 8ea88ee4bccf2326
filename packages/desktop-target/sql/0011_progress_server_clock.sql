-- A delivered command's progress is ordered on the gateway's clock where the desktop's runs ahead
-- of it: a desktop whose clock was ahead and then corrected sends reports stamped earlier than the
-- ones before, and they are still news. The order key is the report's time, but never later than
-- the gateway's clock when it arrived; the latest desktop time seen tells a late replay of a report
-- stamped in the future from a new one.
alter table desktop_task
  add column progress_order_at bigint,
  add column progress_latest_observed_at bigint;
