import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { StopOutcome } from "@openwork/remote-session-core/internal";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { observe } from "./cloud-look.js";
import { locate, sourceOf } from "./cloud-ref.js";
import { buildCloudTranscript } from "./cloud-transcript.js";
import { cloudSessionState } from "./turn-state.js";

// Abort answers true even for a session the worker does not know, and for one with nothing
// running: look first, so a stop reports what it did and list and read never disagree.
export async function stopCloudSession(ctx: CloudContext, call: TargetCall, session: LedgerSession): Promise<StopOutcome> {
  const { client, worker } = await clientFor(ctx, call);
  const { ref, remoteId } = locate(session);
  const { messages, status, workerIdle } = await observe(client, ref.workspaceId, remoteId);
  const signals = ctx.events.peek(sourceOf(worker, ref.workspaceId), remoteId);
  const view = cloudSessionState({
    transcript: buildCloudTranscript(messages, { workerIdle }),
    status,
    signals,
    session,
    now: Date.now(),
    graceMs: ctx.graceMs,
  });
  if (view.state !== "running") return { sessionId: session.id, stopped: false };
  await client.abort(ref.workspaceId, remoteId);
  return { sessionId: session.id, stopped: true, sessionState: "stopped" };
}
