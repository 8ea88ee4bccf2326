import type { PendingInput } from "@openwork/remote-session-core/internal";
import { capabilityName } from "../parse-name.js";

/** The exact follow-up call a result suggests, carried as data so models that read only JSON see it too. */
export interface NextStep {
  name: string;
  body: Record<string, unknown>;
}

/** How long a suggested read waits for the reply. */
export const NEXT_READ_WAIT_MS = 20_000;

/** A read that waits for what comes after `cursor`, or — without one — reads from the start or the end. */
export const nextRead = (sessionId: string, after: { cursor: string } | { from: "start" | "end" }): NextStep => ({
  name: capabilityName("read"),
  body: { sessionId, ...after, waitMs: NEXT_READ_WAIT_MS },
});

/** The answer to what a `waiting_input` session asks, with the choices spelled out. */
export const nextRespond = (sessionId: string, pending: PendingInput): NextStep => ({
  name: capabilityName("respond"),
  body: { sessionId, requestId: pending.id, answer: answerShape(pending) },
});

/** The shape of an answer to `pending`: a budget's names each dimension it reached, above what was spent. */
function answerShape(pending: PendingInput): Record<string, unknown> {
  if (pending.kind === "permission") return { permission: "<once | always | reject>" };
  if (pending.kind !== "budget") return { text: "<your answer>" };
  const raised = Object.fromEntries(
    Object.keys(pending.budget ?? {}).map((dimension) => [dimension, `<the member's new ${dimension}, above ${pending.spent?.[dimension as "tokens"] ?? 0}>`]),
  );
  return { budget: raised };
}

/** A follow-up prompt to a session that waits for one. */
export const nextSend = (sessionId: string): NextStep => ({ name: capabilityName("send"), body: { sessionId, prompt: "<your next message>" } });

// States in which the session will still change by itself: the next step is to wait for it. A
// question only the person at the desktop can answer is waited for too.
const IN_PROGRESS = new Set(["queued", "waking", "running"]);

/** Whether a session in `state` is still moving on its own (so the next step is a read that waits). */
export const inProgress = (state: string): boolean => IN_PROGRESS.has(state);

/** The next step after a call that left the session in `state`: wait for it while it moves, else prompt it. */
export const nextAfter = (sessionId: string, state: string): NextStep | undefined =>
  inProgress(state)
    ? nextRead(sessionId, { from: "end" })
    : state === "idle" || state === "stopped" || state === "failed" || state === "interrupted"
      ? nextSend(sessionId)
      : undefined;
