import type { LedgerSession } from "@openwork/remote-session-core";
import type { CloudContext } from "./cloud-context.js";
import { fail } from "./cloud-errors.js";
import type { EventSource } from "./worker-events.js";
import type { ReadyWorker } from "./worker-resolver.js";

export interface CloudRef {
  workerId: string;
  workspaceId: string;
}

export function locate(session: Pick<LedgerSession, "targetRef" | "targetSessionId">): { ref: CloudRef; remoteId: string } {
  const { workerId, workspaceId } = session.targetRef;
  if (typeof workspaceId !== "string" || !session.targetSessionId) {
    return fail("unknown_session", "this session has no cloud worker session");
  }
  return { ref: { workerId: String(workerId ?? ""), workspaceId }, remoteId: session.targetSessionId };
}

export function sourceOf(worker: ReadyWorker, workspaceId: string): EventSource {
  return { url: worker.url, clientToken: worker.clientToken, workspaceId };
}

export function webUrlOf(ctx: CloudContext, ref: CloudRef, sessionId: string | null): string | undefined {
  return ctx.options.webUrlTemplate && sessionId
    ? ctx.options.webUrlTemplate
        .replaceAll("{workspaceId}", encodeURIComponent(ref.workspaceId))
        .replaceAll("{sessionId}", encodeURIComponent(sessionId))
        .replaceAll("{workerId}", encodeURIComponent(ref.workerId))
    : undefined;
}
