import type { LedgerSession, TargetCall } from "@openwork/remote-session-core";
import type { SessionState } from "@openwork/remote-session-core/internal";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { lookAt } from "./cloud-look.js";
import { locate, sourceOf } from "./cloud-ref.js";
import { delay } from "./delay.js";
import { type FollowedTurn, followTurn } from "./follow-turn.js";
import type { WorkerClient } from "./worker-client.js";
import type { EventSource, SessionWatch } from "./worker-events.js";

/** How long a budgeted turn is followed by default when nobody reads it (`budgetedFollowMs`). */
export const BUDGETED_FOLLOW_MS = 24 * 60 * 60_000;

/** A turn a call started, as its follower knows it (see `FollowedTurn`). */
export interface Turn {
  call: TargetCall;
  sessionId: string;
  from: readonly SessionState[];
  promptAt: number;
  /** The row's target reference once the call is recorded: the prompt the turn answers. */
  targetRef: Record<string, unknown>;
  /** The session's spend is checked against a budget: what each step spent is told as it ends. */
  budgeted?: boolean;
}

/**
 * Listens to a session from before its prompt until its turn ends: an error that ends a turn
 * before any reply is only ever an event, sent within milliseconds of the prompt. With
 * `onObserved`, what the turn comes to is looked at and told (see `followTurn`).
 */
export async function follow(ctx: CloudContext, client: WorkerClient, source: EventSource, remoteId: string, turn: Turn): Promise<void> {
  const watch = ctx.events.watch(source, remoteId);
  await Promise.race([watch.connected, delay(1_000)]);
  const until = Date.now() + (turn.budgeted ? (ctx.options.budgetedFollowMs ?? BUDGETED_FOLLOW_MS) : (ctx.options.followMs ?? 600_000));
  const { onObserved } = ctx.options;
  void (async () => {
    try {
      if (!onObserved) return await listen(watch, until);
      const call = { organizationId: turn.call.organizationId, userId: turn.call.userId, memberId: turn.call.memberId, referenceId: turn.call.referenceId };
      const basis = { state: "running" as const, lastError: null, targetRef: turn.targetRef };
      const look = async () => {
        const { view, spend, counted } = await lookAt(ctx, client, source.workspaceId, remoteId, basis, watch.signals());
        return { view, spend, counted };
      };
      const followed: FollowedTurn = {
        call,
        sessionId: turn.sessionId,
        from: turn.from,
        promptAt: turn.promptAt,
        budgeted: turn.budgeted === true,
        look,
        onObserved,
        signal: ctx.closing.signal,
      };
      await followTurn(watch, followed, until, ctx.graceMs, ctx.logger);
    } finally {
      watch.close();
    }
  })();
}

/** Keeps a turn's stream open until it ends, so an error that ends it is heard (no host to tell). */
async function listen(watch: SessionWatch, until: number): Promise<void> {
  let busy = false;
  while (watch.live() && Date.now() < until) {
    const signals = watch.signals();
    if (signals.error || (busy && signals.status === null)) return;
    busy ||= signals.status !== null;
    await watch.changed(watch.version(), until - Date.now());
  }
}

/**
 * Follows a budgeted turn this process did not start (see `Target.followRunning`), as its own
 * follower would have: as its member (recorded on the session), from the worker's stream. A
 * session from before the member was recorded is left to its next read; so is one whose worker
 * is not ready at once (rejects `cloud_runtime_waking`: no turn runs there now).
 */
export async function followRunning(ctx: CloudContext, session: LedgerSession, referenceId: string): Promise<boolean> {
  const { memberId, lastPromptAt } = session.targetRef;
  if (typeof memberId !== "string") return false;
  const call = { organizationId: session.organizationId, userId: session.userId, memberId, referenceId };
  const { client, worker } = await clientFor(ctx, call, 0);
  const { ref, remoteId } = locate(session);
  await follow(ctx, client, sourceOf(worker, ref.workspaceId), remoteId, {
    call,
    sessionId: session.id,
    from: [session.state],
    promptAt: typeof lastPromptAt === "number" ? lastPromptAt : Date.now(),
    targetRef: session.targetRef,
    budgeted: session.budgeted,
  });
  return true;
}
