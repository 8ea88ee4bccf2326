import type { Queryable } from "@openwork/remote-session-core/internal";
import { type NotificationEvent, NotificationEventSchema, parseOrThrow } from "./notification-event.js";

/**
 * Writes `event` into the outbox on `tx`: call it in the transaction of the state change that
 * causes it, so both commit or neither does. One delivery row per enabled channel of the member
 * that takes this kind of event; an event id already enqueued is a no-op (`duplicate`), and an
 * event no channel takes is not kept. The event's text is kept only when one of those channels
 * allows text. The fan-out is the SQL function `notify_enqueue`, which the state-change trigger
 * calls too. Throws `InvalidNotification` on bad input.
 */
export async function enqueueNotification(tx: Queryable, input: NotificationEvent): Promise<{ deliveries: number; duplicate: boolean }> {
  const event = parseOrThrow(NotificationEventSchema, input, "notification event");
  const [row] = await tx<{ deliveries: number; duplicate: boolean }[]>`
    select deliveries, duplicate from notify_enqueue(${event.organizationId}::text, ${event.id}::text, ${event.kind}::text, ${event.memberId}::text,
      ${event.sessionId}::text, ${event.title}::text, ${event.state}::text, ${event.text ? tx.json(event.text) : null}::jsonb, ${event.occurredAt}::timestamptz)`;
  return { deliveries: row?.deliveries ?? 0, duplicate: row?.duplicate ?? false };
}
