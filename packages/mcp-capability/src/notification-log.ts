import { errorFacts, type Logger, type TargetCall } from "@openwork/remote-session-core";

/** One notification the host sent the member about a session. */
export interface SentNotification {
  /** The kind of channel it went through: `webhook`, `email`, or a host's own. */
  channel: "webhook" | "email" | (string & {});
  /** When it was sent (delivered to the channel, not merely queued). */
  at: Date;
  /** What it told of (`waiting_input`, `request_overdue`, …), when the host knows. */
  kind?: string;
}

/**
 * Where the host records the notifications it sent members (webhooks, emails), so a read can say
 * whether the member was told that a session waits for them. Optional: a host without
 * notifications passes none, and this package imports no notification code.
 */
export interface NotificationLog {
  /**
   * The notifications sent to `scope`'s member about `sessionId`, at or after `since` when given
   * (the moment the session's pending request was raised). Sent ones only, in any order.
   */
  sentFor(scope: { organizationId: string; memberId: string }, sessionId: string, since?: Date): Promise<readonly SentNotification[]>;
}

/** A sent notification as a read shows it: times as ISO strings. */
export interface NotifiedEntry {
  channel: string;
  at: string;
  kind?: string;
}

/** The notifications a read shows for its pending request; `undefined` when unknown (no log, or the log failed). */
export type NotifiedLookup = (call: TargetCall, sessionId: string, askedAt: string | undefined) => Promise<NotifiedEntry[] | undefined>;

/** How long a read waits for the log before answering without it. */
export const NOTIFIED_LOOKUP_TIMEOUT_MS = 2_000;
/** The latest this many notifications are shown: a reminder sent every few minutes must not grow the read. */
export const NOTIFIED_SHOWN = 10;

/**
 * Looks up, through the host's log, what the member was told about a session's pending request:
 * the notifications sent since it was asked (all of the session's when the target gave no time),
 * oldest first. A log that throws, answers garbage or takes longer than
 * {@link NOTIFIED_LOOKUP_TIMEOUT_MS} is logged and the read goes on without them: it is a hint,
 * never a reason to fail a read.
 */
export function createNotifiedLookup(log: NotificationLog | undefined, logger: Logger): NotifiedLookup {
  if (!log) return async () => undefined;
  return async (call, sessionId, askedAt) => {
    const since = askedAt === undefined ? undefined : new Date(askedAt);
    try {
      const sent = await withinTimeout(log.sentFor({ organizationId: call.organizationId, memberId: call.memberId }, sessionId, since));
      return shown(sent, since);
    } catch (error) {
      logger.warn("notification log lookup failed; read answered without notified", { referenceId: call.referenceId, sessionId, error: errorFacts(error) });
      return undefined;
    }
  };
}

/** The entries shown: those since the request (a log may ignore `since`), oldest first, the latest few. */
function shown(sent: readonly SentNotification[], since: Date | undefined): NotifiedEntry[] {
  const entries = sent
    .filter((n) => since === undefined || Number.isNaN(since.getTime()) || n.at.getTime() >= since.getTime())
    .map((n) => ({ channel: String(n.channel), at: n.at.toISOString(), ...(n.kind ? { kind: n.kind } : {}) }));
  return entries.sort((a, b) => a.at.localeCompare(b.at)).slice(-NOTIFIED_SHOWN);
}

async function withinTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NotificationLogTimeout()), NOTIFIED_LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The host's notification log did not answer in time. */
class NotificationLogTimeout extends Error {
  constructor() {
    super(`the notification log did not answer within ${NOTIFIED_LOOKUP_TIMEOUT_MS} ms`);
    this.name = "NotificationLogTimeout";
  }
}
