import type { OpencodeSessionUpdate } from "@openwork/opencode-client";
import type { Stream, Tracked } from "./event-streams.js";

/** Put where live text resumes after the event stream reconnected: deltas sent meanwhile were not heard. */
export const STREAM_GAP = " […the gateway's event stream reconnected here; some of this reply may be missing…] ";
// Live text is bounded per message: reads cut it further, this only stops a runaway reply.
const LIVE_TEXT_LIMIT = 200_000;

// Steps' usage kept per session, for its current turn: past it, a followed turn counts the later
// steps at its looks only.
const STEPS_KEPT = 1_000;

const stepSpendOf = (update: { inputTokens: number; outputTokens: number; cost: number | undefined }) => ({
  inputTokens: update.inputTokens,
  outputTokens: update.outputTokens,
  ...(update.cost !== undefined && update.cost > 0 ? { costMicros: Math.round(update.cost * 1_000_000) } : {}),
});

export function applyEvent(stream: Stream, update: OpencodeSessionUpdate) {
  const tracked = stream.sessions.get(update.sessionId);
  if (!tracked) return;
  const { signals } = tracked;
  switch (update.type) {
    case "text-part": {
      // A text part is created empty before its first delta: heard here, its deltas are whole.
      const heard = tracked.partsHeard.get(update.messageId) ?? new Set();
      tracked.partsHeard.set(update.messageId, heard.add(update.partId));
      return;
    }
    case "text-delta": {
      const known = signals.liveText.get(update.messageId);
      // The reply went on while no stream listened: the start is known, what was said meanwhile is not.
      const gap = tracked.carried.delete(update.messageId) ? STREAM_GAP : "";
      // The first delta of a part whose creation this stream did not hear: the start is missing.
      if (known === undefined && (update.partId === undefined || !tracked.partsHeard.get(update.messageId)?.has(update.partId))) {
        signals.liveTextPartial.add(update.messageId);
      }
      const text = (known ?? "") + gap + update.delta;
      signals.liveText.set(update.messageId, text.slice(0, LIVE_TEXT_LIMIT));
      return;
    }
    case "message": {
      if (update.role === "user" && update.messageId !== tracked.lastUserMessageId) {
        // A new turn: an error seen before belongs to an older one, and so do the steps heard so
        // far (a follower's looks count those; dropping them only lowers its estimate between looks).
        tracked.lastUserMessageId = update.messageId;
        signals.error = null;
        signals.stepSpend.clear();
      }
      if (update.ended) {
        signals.liveText.delete(update.messageId);
        signals.liveTextPartial.delete(update.messageId);
        tracked.partsHeard.delete(update.messageId);
        tracked.carried.delete(update.messageId);
        return bump(tracked);
      }
      return;
    }
    case "error": {
      // opencode reports one failure twice, the second time with a stack: the first one counts.
      if (!update.error || signals.error) return;
      const { name, data } = update.error;
      signals.error = { name, message: firstLine(data?.message ?? name), userMessageId: tracked.lastUserMessageId };
      return bump(tracked);
    }
    case "status":
      signals.status = update.status.type === "idle" ? null : update.status;
      return bump(tracked);
    case "idle":
      signals.status = null;
      return bump(tracked);
    // The turn starts or stops waiting on the human: a waiting read looks again.
    case "asked":
    case "resolved":
      signals.requests++;
      return bump(tracked);
    // A step ended (its usage is in the message list): a budgeted turn's follower looks, and
    // counts what the step used before that look comes back.
    case "usage":
      signals.steps++;
      if (signals.stepSpend.size < STEPS_KEPT) signals.stepSpend.set(update.partId, stepSpendOf(update));
      return bump(tracked);
    // Tool calls reach a reader through the message list.
    case "tool":
      return;
  }
}

function bump(tracked: Tracked): void {
  tracked.version++;
  for (const wake of tracked.wake) wake();
}

/** An engine error message as a person reads it: its first line (opencode may append a stack), bounded. */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? message).slice(0, 500);
}
