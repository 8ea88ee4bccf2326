import type { TargetCall } from "@openwork/remote-session-core";
import type { CreateOutcome, SessionState, TargetCreateInput } from "@openwork/remote-session-core/internal";
import { newOpencodeMessageId } from "@openwork/opencode-client/internal";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { fail } from "./cloud-errors.js";
import { follow, type Turn } from "./cloud-follow.js";
import { OWN_ENTRY, ownEntryRules, useMcp } from "./cloud-mcp.js";
import { type CloudRef, locate, sourceOf, webUrlOf } from "./cloud-ref.js";
import { sessionEntryRules } from "./session-entry.js";
import type { PromptBody, WorkerClient } from "./worker-client.js";
import type { ReadyWorker } from "./worker-resolver.js";

// A create's row is still queued until the core records what the create answered (running).
const CREATED_FROM: readonly SessionState[] = ["queued", "running"];

// Idempotent per session id: the worker's session and the prompt's message id are bound to
// the reserved row before the prompt goes, so a retry of the create finds them and sends the
// prompt only if the worker does not hold it yet. A failed prompt keeps the binding (the
// worker may have taken it before the answer was lost): a retry checks instead of guessing.
export async function createCloudSession(ctx: CloudContext, call: TargetCall, input: TargetCreateInput): Promise<CreateOutcome> {
  const { client, worker } = await clientFor(ctx, call);
  if (input.earlier?.targetSessionId) return resumeCreate(ctx, call, client, worker, input, input.earlier);
  const { workerId } = worker;
  const workspaceId = (input.extra.workspaceId as string | undefined) ?? (await activeWorkspace(client));
  // Born seeing only its own MCP entry: no prompt of it can ever call through another's.
  const remote = await client.createSession(workspaceId, input.title, sessionEntryRules(input.sessionId));
  const promptId = input.prompt ? newOpencodeMessageId() : undefined;
  const ref: CloudRef = { workerId, workspaceId };
  const targetRef = {
    ...ref,
    // Whose worker it is: a gateway that starts resolves it again to follow a budgeted turn.
    memberId: call.memberId,
    [OWN_ENTRY]: true,
    ...(promptId ? { createPromptId: promptId, lastPromptId: promptId, lastPromptAt: Date.now() } : {}),
  };
  try {
    await input.bind({ targetSessionId: remote.id, targetRef });
  } catch (error) {
    // Nothing was prompted and no row points at it: the worker keeps no half-made session.
    await client.deleteSession(workspaceId, remote.id).catch(() => {});
    throw error;
  }
  if (input.prompt && promptId) {
    await useMcp(ctx, call, client, workspaceId, { id: input.sessionId, depth: input.depth ?? 0 });
    const turn = { call, sessionId: input.sessionId, from: CREATED_FROM, promptAt: Date.now(), targetRef, budgeted: input.budgeted === true };
    await promptCreate(ctx, { client, worker }, ref, remote.id, { text: input.prompt, messageID: promptId, model: input.model }, turn);
  }
  ctx.logger.info("cloud target: session created", {
    sessionId: input.sessionId,
    referenceId: call.referenceId,
    workerId,
    promptChars: input.prompt?.length ?? 0,
  });
  return createdOutcome(ctx, input, ref, remote.id, targetRef);
}

/** A retried create: the worker's session an earlier attempt bound, prompted only if it does not hold the prompt yet. */
async function resumeCreate(
  ctx: CloudContext,
  call: TargetCall,
  client: WorkerClient,
  worker: ReadyWorker,
  input: TargetCreateInput,
  earlier: NonNullable<TargetCreateInput["earlier"]>,
) {
  const { ref, remoteId } = locate(earlier);
  const promptId = typeof earlier.targetRef.createPromptId === "string" ? earlier.targetRef.createPromptId : undefined;
  const held = promptId === undefined || (await client.messages(ref.workspaceId, remoteId)).some((m) => m.info.id === promptId);
  if (input.prompt && promptId && !held) {
    await ownEntryRules(ctx, client, ref.workspaceId, remoteId, { id: input.sessionId, targetRef: earlier.targetRef });
    await useMcp(ctx, call, client, ref.workspaceId, { id: input.sessionId, depth: input.depth ?? 0 });
    const turn = {
      call,
      sessionId: input.sessionId,
      from: CREATED_FROM,
      promptAt: Date.now(),
      targetRef: { ...earlier.targetRef, lastPromptAt: Date.now() },
      budgeted: input.budgeted === true,
    };
    await promptCreate(ctx, { client, worker }, ref, remoteId, { text: input.prompt, messageID: promptId, model: input.model }, turn);
  }
  ctx.logger.info("cloud target: session create resumed", { sessionId: input.sessionId, referenceId: call.referenceId, promptHeld: held });
  return createdOutcome(ctx, input, ref, remoteId, earlier.targetRef);
}

/** A create's prompt, listened to from before it goes (see `follow`). */
async function promptCreate(
  ctx: CloudContext,
  { client, worker }: { client: WorkerClient; worker: ReadyWorker },
  ref: CloudRef,
  remoteId: string,
  prompt: PromptBody,
  turn: Turn,
) {
  await follow(ctx, client, sourceOf(worker, ref.workspaceId), remoteId, turn);
  await client.promptAsync(ref.workspaceId, remoteId, prompt);
}

function createdOutcome(ctx: CloudContext, input: TargetCreateInput, ref: CloudRef, remoteId: string, targetRef: Record<string, unknown>) {
  const webUrl = webUrlOf(ctx, ref, remoteId);
  return { state: input.prompt ? ("running" as const) : ("idle" as const), targetSessionId: remoteId, targetRef, ...(webUrl ? { webUrl } : {}) };
}

async function activeWorkspace(client: WorkerClient): Promise<string> {
  const { items, activeId } = await client.workspaces();
  const id = activeId ?? items[0]?.id;
  return id ?? fail("cloud_runtime_failed", "the cloud worker has no workspace");
}
