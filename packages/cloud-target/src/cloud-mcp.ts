import { errorFacts, type TargetCall } from "@openwork/remote-session-core";
import type { CloudContext } from "./cloud-context.js";
import { hasEntryRules, sessionEntryName, sessionEntryRules } from "./session-entry.js";
import type { WorkerClient } from "./worker-client.js";

/** In a row's target reference: the worker's session has the rules that hide other sessions' entries. */
export const OWN_ENTRY = "ownMcpEntry";

/**
 * The session's own MCP entry in its workspace (a fresh credential), before a prompt of it goes.
 * Only while the session runs no turn: the engine cuts the open calls of the entry it replaces,
 * and a session's entry is only ever replaced by its own prompts (each session has its own). One
 * the engine could not connect, or a worker without MCP, leaves the prompt to run without it:
 * logged, never the credential.
 */
export async function useMcp(ctx: CloudContext, call: TargetCall, client: WorkerClient, workspaceId: string, session: { id: string; depth: number }) {
  if (!ctx.options.sessionMcp) return;
  const entry = ctx.options.sessionMcp({
    organizationId: call.organizationId,
    userId: call.userId,
    memberId: call.memberId,
    sessionId: session.id,
    depth: session.depth,
  });
  const facts = { sessionId: session.id, referenceId: call.referenceId };
  try {
    const held = await client.putMcpEntry(workspaceId, sessionEntryName(session.id), entry);
    if (held.status !== "connected") {
      ctx.logger.warn("cloud target: the worker's engine did not connect the session's MCP entry", {
        ...facts,
        status: held.status,
        error: held.error?.slice(0, 200),
      });
    }
  } catch (error) {
    ctx.logger.warn("cloud target: the worker took no MCP entry", { ...facts, error: errorFacts(error) });
  }
}

/**
 * A session created before sessions had their own entries sees every session's entry: it is
 * given the rules once, before its first own entry. True when the session has them (the row
 * records it, so this is asked once).
 */
export async function ownEntryRules(
  ctx: CloudContext,
  client: WorkerClient,
  workspaceId: string,
  remoteId: string,
  session: { id: string; targetRef: Record<string, unknown> },
) {
  if (!ctx.options.sessionMcp || session.targetRef[OWN_ENTRY] === true) return session.targetRef[OWN_ENTRY] === true;
  if (!hasEntryRules(await client.sessionPermission(workspaceId, remoteId), session.id)) {
    await client.addSessionPermission(workspaceId, remoteId, sessionEntryRules(session.id));
  }
  return true;
}
