/**
 * `start()` could not hear its own hint on the wake bus (LISTEN through a transaction pooler, a
 * NATS server that does not answer): the replica would never wake its readers and runners, so it
 * does not start. The message is the bus's own reason; the host names its setting.
 */
export class WakeBusUnavailable extends Error {
  override readonly name = "WakeBusUnavailable";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}
