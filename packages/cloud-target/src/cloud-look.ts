import type { LedgerSession } from "@openwork/remote-session-core";
import type { MessageWithParts } from "@openwork/opencode-client/internal";
import type { CloudContext } from "./cloud-context.js";
import { countedSteps, spendOfMessages } from "./cloud-spend.js";
import { buildCloudTranscript } from "./cloud-transcript.js";
import { sessionRequests } from "./pending-requests.js";
import { cloudSessionState } from "./turn-state.js";
import type { WorkerClient } from "./worker-client.js";
import type { SessionSignals } from "./worker-events.js";

/** What the state of a session is read against: the ledger row, or what a followed turn knows of it. */
export type StateBasis = Pick<LedgerSession, "state" | "lastError" | "targetRef">;

/** One look at a session on its worker: its transcript, the state it shows, what it spent (and the steps that counts). */
export async function lookAt(
  ctx: CloudContext,
  client: WorkerClient,
  workspaceId: string,
  remoteId: string,
  session: StateBasis,
  signals: SessionSignals | undefined,
) {
  const { messages, status, workerIdle } = await observe(client, workspaceId, remoteId);
  // Only a busy turn can be waiting on the human: idle sessions cost no extra request.
  const requests = status?.type === "busy" ? sessionRequests(remoteId, await client.requests(workspaceId), messages) : [];
  const transcript = buildCloudTranscript(messages, { liveText: signals?.liveText, liveTextPartial: signals?.liveTextPartial, workerIdle });
  const now = Date.now();
  const view = cloudSessionState({ transcript, status, signals, session, now, graceMs: ctx.graceMs, pending: requests[0]?.pending });
  return { transcript, view, spend: spendOfMessages(messages, view.state === "running", now), counted: countedSteps(messages) };
}

/**
 * A session's messages and status, read so that "idle" can be trusted about the messages: the
 * messages first, then the status. When the worker is idle but a reply was incomplete, the
 * messages once more: a reply that finished meanwhile shows finished, and one still incomplete,
 * listed before the worker said idle, was abandoned (a reply begun since is another message).
 */
export async function observe(client: WorkerClient, workspaceId: string, sessionId: string) {
  const first = await client.messages(workspaceId, sessionId);
  const status = (await client.status(workspaceId))[sessionId];
  const incomplete = lastIncompleteReply(first);
  if (status !== undefined || incomplete === undefined) return { messages: first, status, workerIdle: status === undefined };
  const messages = await client.messages(workspaceId, sessionId);
  return { messages, status, workerIdle: lastIncompleteReply(messages) === incomplete };
}

function lastIncompleteReply(messages: MessageWithParts[]): string | undefined {
  return messages.findLast((m) => m.info.role === "assistant" && m.info.time.completed === undefined && m.info.error === undefined)?.info.id;
}
