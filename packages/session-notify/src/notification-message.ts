import type { NotificationEvent, NotificationKind } from "./notification-event.js";

const HEADLINES: Record<NotificationKind, string> = {
  waiting_input: "is waiting for your answer",
  turn_idle: "finished its turn",
  turn_failed: "failed",
  turn_stopped: "was stopped",
  task_expired: "expired before a desktop took it",
  desktop_lost: "lost its desktop mid-turn",
  request_overdue: "has a request nobody answered",
};

/** The subject line of an event: its title and what happened, never its text. */
export const subjectOf = (event: NotificationEvent): string => `${event.title || event.sessionId} ${HEADLINES[event.kind]}`;

/** A plain-text body: what happened and the state, then the text the channel allows (the caller already dropped the rest). */
export function bodyOf(event: NotificationEvent): string {
  const lines = [subjectOf(event), "", `Session: ${event.sessionId}`, `State: ${event.state}`, `At: ${event.occurredAt.toISOString()}`];
  const { prompt, question, answer } = event.text ?? {};
  if (question !== undefined) lines.push("", "It asks:", question);
  if (prompt !== undefined) lines.push("", "Prompt:", prompt);
  if (answer !== undefined) lines.push("", "Answer:", answer);
  return `${lines.join("\n")}\n`;
}

/** The webhook's JSON body, in the Standard Webhooks shape: `type`, `timestamp`, `data`. */
export function payloadOf(event: NotificationEvent, timestamp: Date): string {
  const { id, kind, organizationId, memberId, sessionId, title, state, occurredAt, text } = event;
  const data = { eventId: id, kind, organizationId, memberId, sessionId, title, state, occurredAt: occurredAt.toISOString(), ...(text ? { text } : {}) };
  return JSON.stringify({ type: `session.${kind}`, timestamp: timestamp.toISOString(), data });
}
