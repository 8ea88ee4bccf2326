import type { PendingInput } from "@openwork/remote-session-core/internal";
import { pendingInput } from "@openwork/remote-session-core/target";
import type { TranscriptTask } from "./build-transcript.js";
import type { FoldedRequest } from "./task-fold.js";

/**
 * What the session's running turn asks the human: the requests of the claimed turn that no
 * `input.resolved` followed (its fold keeps them), oldest first. A turn that ended asks nothing.
 */
export function openAsksOf(tasks: TranscriptTask[]): FoldedRequest[] {
  return tasks.findLast((t) => t.state === "claimed")?.fold.asked ?? [];
}

/** A folded request as a read shows it. */
export function pendingInputOf(asked: FoldedRequest): PendingInput {
  const { requestId, kind, title, detail, options, askedAt } = asked;
  return pendingInput({ kind, id: requestId, title, detail, ...(options ? { options } : {}), askedAt });
}
