import type { NotificationEvent, NotificationKind } from "./notification-event.js";

const HEADLINES: Record<NotificationKind, string> = {
  waiting_input: "is waiting for your answer",
  turn_idle: "finished its turn",
  turn_failed: "failed",
  turn_stopped: "was stopped",
  task_expired: "expired before a desktop took it",
  desktop_lost: "lost its desktop mid-turn",
  request_overdue: "has a request nobody answered",
  budget_reached: "paused at its budget",
};

const WAITS: ReadonlySet<NotificationKind> = new Set(["waiting_input", "request_overdue", "budget_reached"]);

/** The subject line of an event: its title and what happened, never its text. */
export const subjectOf = (event: NotificationEvent): string => `${event.title || event.sessionId} ${HEADLINES[event.kind]}`;

/**
 * A plain-text body: what happened and the state, the answer link when there is one (else, for an
 * event that waits on the member, where to answer), then the
 * text the channel allows (the caller already dropped the rest).
 */
export function bodyOf(event: NotificationEvent, answerUrl?: string): string {
  const lines = [subjectOf(event), "", `Session: ${event.sessionId}`, `State: ${event.state}`, `At: ${event.occurredAt.toISOString()}`];
  if (answerUrl !== undefined) lines.push("", "Answer it here (the link works once, for a few minutes):", answerUrl);
  // A channel without text gets no link (its page shows the request): it says where to answer instead.
  else if (WAITS.has(event.kind)) lines.push("", "Answer it in OpenWork (open the session there) or through your agent.");
  const { prompt, question, answer } = event.text ?? {};
  if (question !== undefined) lines.push("", "It asks:", question);
  if (prompt !== undefined) lines.push("", "Prompt:", prompt);
  if (answer !== undefined) lines.push("", "Answer:", answer);
  return `${lines.join("\n")}\n`;
}

/** The webhook's JSON body, in the Standard Webhooks shape: `type`, `timestamp`, `data` (with `answerUrl` when there is one). */
export function payloadOf(event: NotificationEvent, timestamp: Date, answerUrl?: string): string {
  const { id, kind, organizationId, memberId, sessionId, title, state, occurredAt, text } = event;
  const data = {
    eventId: id,
    kind,
    organizationId,
    memberId,
    sessionId,
    title,
    state,
    occurredAt: occurredAt.toISOString(),
    ...(answerUrl !== undefined ? { answerUrl } : {}),
    ...(text ? { text } : {}),
  };
  return JSON.stringify({ type: `session.${kind}`, timestamp: timestamp.toISOString(), data });
}
