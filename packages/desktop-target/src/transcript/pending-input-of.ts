import { type PendingInput, pendingInput } from "@openwork/remote-session-core";
import type { TranscriptTask } from "./build-transcript.js";

/**
 * What the session's running turn asks the human, from its events: the latest `input.requested`
 * of the claimed turn that no `input.resolved` followed. A turn that ended asks nothing.
 */
export function pendingInputOf(tasks: TranscriptTask[]): PendingInput | undefined {
  const turn = tasks.findLast((t) => t.state === "claimed");
  if (!turn) return undefined;
  const asked = new Map<string, PendingInput>();
  for (const { event, receivedAt } of turn.events) {
    if (event.type === "input.requested") {
      const { requestId, kind, title, detail, options } = event.payload;
      asked.delete(requestId);
      asked.set(requestId, pendingInput({ kind, id: requestId, title, detail, ...(options ? { options } : {}), askedAt: receivedAt.toISOString() }));
    } else if (event.type === "input.resolved") {
      asked.delete(event.payload.requestId);
    }
  }
  return [...asked.values()].at(-1);
}
