import { randomUUID } from "node:crypto";
import { rejectOnAbort } from "./abort-rejection.js";
import { errorFacts, type Logger, silentLogger } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import type { NotificationEvent, NotificationKind, NotificationText } from "./notification-event.js";
import { DEFAULT_DELIVERY_LANES, DeliveryLanes, type DeliveryLaneLimits, type LaneRooms } from "./delivery-lanes.js";
import { migrateSessionNotify } from "./notify-migrations.js";
import { type ChannelKind, type DeliveryChannel, type NotificationDelivery, type Notifier, NotifyError } from "./notifier.js";

export interface NotificationDrainOptions {
  /** Resolves the tables' names (in `schema` when one is given). */
  sql: Sql;
  /** Where the tables are; created and migrated at start. Default: the handle's current schema. */
  schema?: string;
  /** One adapter per channel kind. A delivery whose kind has none stays pending. */
  notifiers: readonly Notifier[];
  /** How often the outbox is looked at without a wake-up. Default 1 000 ms. */
  intervalMs?: number;
  /** Tries before a delivery is `dead`. Default 8. */
  maxAttempts?: number;
  /** The wait before try `attempt + 1`, in ms. Default 1 s doubling, at most 5 minutes. */
  backoff?: (attempt: number) => number;
  /** Registers a source of wake-ups (a committed enqueue elsewhere); returns its unsubscribe. */
  wake?: (drainNow: () => void) => () => void;
  /** A send is aborted after this long; a claim lasts twice this, then another drainer may send again. Default 10 000 ms. */
  sendTimeoutMs?: number;
  /** Sends in flight at once. Default 16. */
  batchSize?: number;
  /**
   * Sends in flight at once to one member's channels (default 4) and to one channel (default 2):
   * a destination that never answers holds its own lanes until its sends time out, never the others'.
   */
  lanes?: Partial<Pick<DeliveryLaneLimits, "perMember" | "perChannel">>;
  /** Sent deliveries older than this are deleted (with events left without any), at most once a minute. Default 7 days. Dead ones stay for the operator. */
  keepSentMs?: number;
  /**
   * How long a session may stay `waiting_input` before its member is told `request_overdue`
   * (once per waiting episode, by whichever replica gets there). Looked for at most once per
   * `intervalMs`, however often the drain is woken. Default 15 minutes.
   */
  overdueAfterMs?: number;
  /**
   * Called at send time for each delivery to a channel that allows text, to add what the outbox
   * does not keep: the question's text and an answer link (`answerUrl`). Never for a channel
   * without text: the answer page shows the request and the last messages, so a link there would
   * hand text to whoever sees the channel (such a channel says the session waits, without a link).
   * Events written by the state-change trigger have no text. A
   * throw counts as a failed try (retried), and so does outliving `signal` (the send's timeout,
   * which counts describe and send together). Called again on each retry.
   */
  describe?: (event: NotificationEvent, channel: DeliveryChannel, signal: AbortSignal) => Promise<NotificationDescription | undefined>;
  logger?: Logger;
}

/** What `describe` adds to a delivery at send time. */
export interface NotificationDescription {
  text?: NotificationText;
  answerUrl?: string;
}

/** What `/metrics` shows of the outbox. `retrying`: tried at least once and due again (a send in flight counts). */
export interface NotificationStats {
  pending: number;
  retrying: number;
  sent: number;
  dead: number;
}

export interface NotificationDrain {
  /** Looks at the outbox now (after a transaction that enqueued committed). */
  wake(): void;
  stats(): Promise<NotificationStats>;
  /** Stops claiming and waits for the sends in flight. */
  close(): Promise<void>;
}

/** Sessions a pass enqueues request_overdue for at most; a full batch is followed by another pass's. */
const OVERDUE_BATCH = 500;

export const defaultBackoff = (attempt: number): number => Math.min(300_000, 1_000 * 2 ** Math.max(0, attempt - 1));

interface ClaimedRow {
  organizationId: string;
  eventId: string;
  channelId: string;
  attempts: number;
  kind: NotificationKind;
  memberId: string;
  sessionId: string;
  title: string;
  state: string;
  text: NotificationText | null;
  occurredAt: Date;
  channelKind: ChannelKind;
  target: string;
  secret: string | null;
  allowText: boolean;
  enabled: boolean;
  /** Due deliveries the claim looked at (locked), claimed or left for a busy lane. */
  candidates: number;
}

/**
 * Migrates, then drains the outbox: claims due deliveries (`for update skip locked`, so any number
 * of replicas may run one), sends each through the notifier of its channel's kind, and marks it
 * sent, schedules a retry after `backoff`, or moves it to `dead` after `maxAttempts` (or at once on
 * a failure no retry can mend). At least once: a drainer that dies after sending and before marking
 * leaves the delivery to be sent again once its claim lapses, with the same event id.
 */
export async function startNotificationDrain(options: NotificationDrainOptions): Promise<NotificationDrain> {
  const { sql } = options;
  await migrateSessionNotify(sql, options.schema ? { schema: options.schema } : {});
  const settings = drainSettings(options);
  const drain: DrainContext = {
    settings,
    notifiers: new Map(options.notifiers.map((notifier) => [notifier.kind, notifier])),
    describe: options.describe,
    outbox: outboxStatements(sql),
    lanes: new DeliveryLanes(settings.lanes),
    sends: new Set(),
    leftForLanes: false,
    prunedAt: Number.NEGATIVE_INFINITY,
    overdueAt: Number.NEGATIVE_INFINITY,
    closed: false,
    timer: undefined,
    running: null,
    again: false,
  };
  const wake = (): void => run(drain);
  const unsubscribe = options.wake?.(wake);
  wake();
  return {
    wake,
    stats: drain.outbox.stats,
    close: async () => {
      drain.closed = true;
      clearTimeout(drain.timer);
      unsubscribe?.();
      await drain.running;
      await Promise.all(drain.sends);
    },
  };
}

/** The options with their defaults. */
function drainSettings(options: NotificationDrainOptions) {
  return {
    intervalMs: options.intervalMs ?? 1_000,
    maxAttempts: options.maxAttempts ?? 8,
    backoff: options.backoff ?? defaultBackoff,
    sendTimeoutMs: options.sendTimeoutMs ?? 10_000,
    lanes: { ...DEFAULT_DELIVERY_LANES, ...(options.batchSize ? { inFlight: options.batchSize } : {}), ...options.lanes },
    keepSentMs: options.keepSentMs ?? 7 * 86_400_000,
    overdueAfterMs: options.overdueAfterMs ?? 15 * 60_000,
    logger: options.logger ?? silentLogger,
  };
}

/** What a running drain's pieces share: its settings and statements, and where its passes and sends are. */
interface DrainContext {
  settings: ReturnType<typeof drainSettings>;
  notifiers: Map<ChannelKind, Notifier>;
  describe: NotificationDrainOptions["describe"];
  outbox: OutboxStatements;
  lanes: DeliveryLanes;
  sends: Set<Promise<void>>;
  // Whether the last pass left due deliveries for lanes that were full: a send that ends claims again.
  leftForLanes: boolean;
  prunedAt: number;
  overdueAt: number;
  closed: boolean;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | null;
  again: boolean;
}

/** Sends one claimed delivery and marks it sent, to retry or dead. */
async function deliver(drain: DrainContext, row: ClaimedRow, claim: string): Promise<void> {
  const { settings, outbox } = drain;
  const key = { organizationId: row.organizationId, eventId: row.eventId, channelId: row.channelId, claim };
  if (!row.enabled) return outbox.dead(key, "the channel was disabled before sending");
  const notifier = drain.notifiers.get(row.channelKind);
  if (!notifier) return outbox.retry(key, settings.backoff(row.attempts), `no notifier for ${row.channelKind}`, true);
  const signal = AbortSignal.timeout(settings.sendTimeoutMs);
  const error = await described(deliveryOf(row), drain.describe, signal)
    .then((delivery) => notifier.send(delivery, signal))
    .then(
      () => null,
      (failure: unknown) => failure ?? new Error("rejected without a reason"),
    );
  // A failure to mark (the database gone) is no failure to send: the claim lapses and the delivery goes again.
  if (error === null) return outbox.sent(key);
  const retryable = !(error instanceof NotifyError) || error.retryable;
  // Only the error's class and code are kept: a message could quote what was sent.
  const reason = error instanceof NotifyError ? `${error.code}: ${error.message}` : `failed: ${String(errorFacts(error).class)}`;
  if (retryable && row.attempts < settings.maxAttempts) return outbox.retry(key, settings.backoff(row.attempts), reason, false);
  settings.logger.warn("notification dead", { eventId: row.eventId, channelId: row.channelId, attempts: row.attempts, ...errorFacts(error) });
  return outbox.dead(key, reason);
}

/** One look at the outbox: retention and overdue requests when due, then claims as much as the lanes have room for. */
async function pass(drain: DrainContext): Promise<void> {
  const { settings, outbox, lanes } = drain;
  if (Date.now() - drain.prunedAt >= 60_000) {
    drain.prunedAt = Date.now();
    await outbox.prune(settings.keepSentMs);
  }
  // A wake-up (a committed enqueue, up to tens a second under load) asks for the claim below, not
  // for this scan: a session turns overdue with the clock, so it is looked for at most once per
  // interval (found at most `intervalMs` late); a full batch leaves the rest to the next pass.
  if (Date.now() - drain.overdueAt >= settings.intervalMs) {
    drain.overdueAt = Date.now();
    if ((await outbox.enqueueOverdue(settings.overdueAfterMs)) === OVERDUE_BATCH) drain.overdueAt = Number.NEGATIVE_INFINITY;
  }
  // Sends are not waited for: each frees its lanes as it ends, and the claim fills what is free.
  for (;;) {
    const limit = lanes.free();
    if (limit === 0) {
      drain.leftForLanes = true;
      return;
    }
    const claim = randomUUID();
    const rows = await outbox.claim(claim, limit, settings.sendTimeoutMs * 2, lanes.rooms());
    for (const row of rows) startSend(drain, row, claim);
    const candidates = rows[0]?.candidates ?? 0;
    // Due deliveries left for a lane with no room (passed over, or past its room in this claim).
    drain.leftForLanes = rows.length < candidates || lanes.anyFull();
    if (candidates < limit) return;
  }
}

/** Starts sending a claimed delivery in its lanes; its end frees them and claims again if the last pass left some. */
function startSend(drain: DrainContext, row: ClaimedRow, claim: string): void {
  drain.lanes.enter(row);
  const send = deliver(drain, row, claim)
    .catch((error: unknown) => drain.settings.logger.error("notification delivery failed", errorFacts(error)))
    .finally(() => {
      drain.lanes.leave(row);
      drain.sends.delete(send);
      if (drain.leftForLanes) run(drain);
    });
  drain.sends.add(send);
}

/** Runs a pass now, or right after the one running; then the next after `intervalMs`. */
function run(drain: DrainContext): void {
  if (drain.closed) return;
  if (drain.running) {
    drain.again = true;
    return;
  }
  clearTimeout(drain.timer);
  drain.running = pass(drain)
    .catch((error: unknown) => drain.settings.logger.error("notification drain pass failed", errorFacts(error)))
    .finally(() => {
      drain.running = null;
      if (drain.again) {
        drain.again = false;
        run(drain);
      } else if (!drain.closed) drain.timer = setTimeout(() => run(drain), drain.settings.intervalMs);
    });
}

/** The delivery with what `describe` adds (its text and its answer link), only where the channel allows text. */
async function described(delivery: NotificationDelivery, describe: NotificationDrainOptions["describe"], signal: AbortSignal): Promise<NotificationDelivery> {
  if (!describe || !delivery.channel.allowText) return delivery;
  const extra = await Promise.race([describe(delivery.event, delivery.channel, signal), rejectOnAbort(signal)]);
  if (!extra) return delivery;
  const text = extra.text ? { ...delivery.event.text, ...extra.text } : delivery.event.text;
  return { ...delivery, event: { ...delivery.event, ...(text ? { text } : {}) }, ...(extra.answerUrl ? { answerUrl: extra.answerUrl } : {}) };
}

/** The event as its channel may see it: text only where the member allowed it. */
function deliveryOf(row: ClaimedRow): NotificationDelivery {
  const { eventId, kind, organizationId, memberId, sessionId, title, state, occurredAt, text } = row;
  const event = { id: eventId, kind, organizationId, memberId, sessionId, title, state, occurredAt };
  return {
    event: row.allowText && text ? { ...event, text } : event,
    channel: { id: row.channelId, kind: row.channelKind, target: row.target, secret: row.secret, allowText: row.allowText },
    attempt: row.attempts,
  };
}

interface ClaimKey {
  organizationId: string;
  eventId: string;
  channelId: string;
  claim: string;
}

/** The outbox's statements; each mark applies only while the drainer still holds its claim. */
function outboxStatements(sql: Sql) {
  const mine = (key: ClaimKey) =>
    sql`organization_id = ${key.organizationId} and event_id = ${key.eventId} and channel_id = ${key.channelId} and claim = ${key.claim}`;
  return {
    /**
     * Claims at most `limit` due deliveries, oldest first, skipping lanes with no room and taking no
     * more of a lane than its room (lanes are keyed as `laneKey` keys them: chr(31) between).
     */
    claim: (claim: string, limit: number, leaseMs: number, busy: LaneRooms): Promise<ClaimedRow[]> => claimDue(sql, { claim, limit, leaseMs, busy }),
    sent: async (key: ClaimKey): Promise<void> => {
      await sql`update notify_delivery set status = 'sent', sent_at = now(), claim = null, last_error = null where ${mine(key)}`;
    },
    retry: async (key: ClaimKey, afterMs: number, reason: string, uncounted: boolean): Promise<void> => {
      await sql`
        update notify_delivery set claim = null, last_error = ${reason.slice(0, 500)},
          attempts = attempts - ${uncounted ? 1 : 0}, next_attempt_at = now() + make_interval(secs => ${afterMs / 1000})
        where ${mine(key)}`;
    },
    dead: async (key: ClaimKey, reason: string): Promise<void> => {
      await sql`update notify_delivery set status = 'dead', claim = null, last_error = ${reason.slice(0, 500)} where ${mine(key)}`;
    },
    /** Enqueues request_overdue for sessions waiting longer than `afterMs`, at most OVERDUE_BATCH; answers how many. */
    enqueueOverdue: async (afterMs: number): Promise<number> => {
      const [row] = await sql<{ enqueued: number }[]>`
        select notify_enqueue_overdue(make_interval(secs => ${afterMs / 1000}), ${OVERDUE_BATCH}) as enqueued`;
      return row?.enqueued ?? 0;
    },
    /** One bounded retention pass: old sent deliveries, then the events none is left of, then answer links a day past their expiry. */
    prune: (keepMs: number): Promise<void> => pruneOutbox(sql, keepMs),
    stats: async (): Promise<NotificationStats> => {
      const [row] = await sql<NotificationStats[]>`
        /* across organizations: metrics */
        select count(*) filter (where status = 'pending' and attempts = 0)::int as pending,
          count(*) filter (where status = 'pending' and attempts > 0)::int as retrying,
          count(*) filter (where status = 'sent')::int as sent,
          count(*) filter (where status = 'dead')::int as dead
        from notify_delivery`;
      return row ?? { pending: 0, retrying: 0, sent: 0, dead: 0 };
    },
  };
}

type OutboxStatements = ReturnType<typeof outboxStatements>;

/** The claim of `outboxStatements`: marks the deliveries claimed and answers them with their event and channel. */
function claimDue(sql: Sql, { claim, limit, leaseMs, busy }: { claim: string; limit: number; leaseMs: number; busy: LaneRooms }): Promise<ClaimedRow[]> {
  return sql<ClaimedRow[]>`
        /* across organizations: the outbox drain */
        with due as (
          select d.organization_id, d.event_id, d.channel_id, d.next_attempt_at, c.member_id,
            coalesce(m.room, ${busy.limits.perMember}) as member_room, coalesce(ch.room, ${busy.limits.perChannel}) as channel_room
          from notify_delivery d
          join notify_channel c on c.organization_id = d.organization_id and c.id = d.channel_id
          left join unnest(${busy.members.keys}::text[], ${busy.members.rooms}::int[]) as m(key, room)
            on m.key = d.organization_id || chr(31) || c.member_id
          left join unnest(${busy.channels.keys}::text[], ${busy.channels.rooms}::int[]) as ch(key, room)
            on ch.key = d.organization_id || chr(31) || d.channel_id
          where d.status = 'pending' and d.next_attempt_at <= now()
            and coalesce(m.room, ${busy.limits.perMember}) > 0 and coalesce(ch.room, ${busy.limits.perChannel}) > 0
          order by d.next_attempt_at limit ${limit} for update of d skip locked),
        ranked as (
          select due.*,
            row_number() over (partition by organization_id, member_id order by next_attempt_at) as member_rank,
            row_number() over (partition by organization_id, channel_id order by next_attempt_at) as channel_rank
          from due),
        claimed as (
          update notify_delivery d set attempts = d.attempts + 1, claim = ${claim},
            next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000})
          from ranked r where d.organization_id = r.organization_id and d.event_id = r.event_id and d.channel_id = r.channel_id
            and r.member_rank <= r.member_room and r.channel_rank <= r.channel_room
          returning d.organization_id, d.event_id, d.channel_id, d.attempts)
        select (select count(*) from due)::int as candidates,
          k.organization_id as "organizationId", k.event_id as "eventId", k.channel_id as "channelId", k.attempts,
          e.kind, e.member_id as "memberId", e.session_id as "sessionId", e.title, e.state, e.text, e.occurred_at as "occurredAt",
          c.kind as "channelKind", c.target, c.secret, c.allow_text as "allowText", c.enabled
        from claimed k
        join notify_event e on e.organization_id = k.organization_id and e.id = k.event_id
        join notify_channel c on c.organization_id = k.organization_id and c.id = k.channel_id`;
}

/** The retention pass of `outboxStatements`. */
async function pruneOutbox(sql: Sql, keepMs: number): Promise<void> {
  await sql`
        /* across organizations: retention */
        delete from notify_delivery where (organization_id, event_id, channel_id) in (
          select organization_id, event_id, channel_id from notify_delivery
          where status = 'sent' and sent_at < now() - make_interval(secs => ${keepMs / 1000}) limit 5000)`;
  await sql`
        /* across organizations: retention */
        delete from notify_event e where (e.organization_id, e.id) in (
          select organization_id, id from notify_event where created_at < now() - make_interval(secs => ${keepMs / 1000}) limit 5000)
        and not exists (select 1 from notify_delivery d where d.organization_id = e.organization_id and d.event_id = e.id)`;
  // Kept a day after expiry, so a late click still reads "expired" or "used" rather than "not valid".
  await sql`
        /* across organizations: retention */
        delete from notify_answer_link where id in (select id from notify_answer_link where expires_at < now() - interval '1 day' limit 5000)`;
}
