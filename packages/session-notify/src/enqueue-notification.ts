import type { Queryable } from "@openwork/remote-session-core";
import { type NotificationEvent, NotificationEventSchema, parseOrThrow } from "./notification-event.js";

/**
 * Writes `event` into the outbox on `tx`: call it in the transaction of the state change that
 * causes it, so both commit or neither does. One delivery row per enabled channel of the member
 * that takes this kind of event; an event id already enqueued is a no-op (`duplicate`). The event's
 * text is kept only when one of those channels allows text. Throws `InvalidNotification` on bad input.
 */
export async function enqueueNotification(tx: Queryable, input: NotificationEvent): Promise<{ deliveries: number; duplicate: boolean }> {
  const event = parseOrThrow(NotificationEventSchema, input, "notification event");
  const [row] = await tx<{ events: number; deliveries: number }[]>`
    with channels as (
      select organization_id, id, allow_text from notify_channel
      where organization_id = ${event.organizationId} and member_id = ${event.memberId} and enabled and ${event.kind} = any(event_kinds)),
    event as (
      insert into notify_event (organization_id, id, kind, member_id, session_id, title, state, text, occurred_at)
      values (${event.organizationId}, ${event.id}, ${event.kind}, ${event.memberId}, ${event.sessionId}, ${event.title}, ${event.state},
        case when exists (select 1 from channels where allow_text) then ${event.text ? tx.json(event.text) : null}::jsonb end,
        ${event.occurredAt})
      on conflict (organization_id, id) do nothing
      returning organization_id, id),
    deliveries as (
      insert into notify_delivery (organization_id, event_id, channel_id)
      select e.organization_id, e.id, c.id from event e cross join channels c
      returning channel_id)
    select (select count(*) from event)::int as events, (select count(*) from deliveries)::int as deliveries`;
  return { deliveries: row?.deliveries ?? 0, duplicate: row?.events === 0 };
}
