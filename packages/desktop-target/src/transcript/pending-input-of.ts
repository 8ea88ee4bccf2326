import type { PendingInput } from "@openwork/remote-session-core/internal";
import { pendingInput } from "@openwork/remote-session-core/target";
import type { TranscriptTask } from "./build-transcript.js";

/**
 * What the session's running turn asks the human: the latest `input.requested` of the claimed
 * turn that no `input.resolved` followed (its fold keeps them). A turn that ended asks nothing.
 */
export function pendingInputOf(tasks: TranscriptTask[]): PendingInput | undefined {
  const turn = tasks.findLast((t) => t.state === "claimed");
  const asked = turn?.fold.asked.at(-1);
  if (!asked) return undefined;
  const { requestId, kind, title, detail, options, askedAt } = asked;
  return pendingInput({ kind, id: requestId, title, detail, ...(options ? { options } : {}), askedAt });
}
