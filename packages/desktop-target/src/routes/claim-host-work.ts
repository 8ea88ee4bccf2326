import type { ClaimedAssignment, WorkAssignment } from "@openwork/runner-protocol";
import { errorFacts } from "@openwork/remote-session-core";
import { isBuiltInKind } from "@openwork/runner-protocol/internal";
import type { HostWorkKind, WorkClaim, WorkRunner } from "../host-work-kind.js";
import { kindsToClaim } from "../runner-abilities.js";
import type { RunnerIdentity } from "../store/task-row.js";
import { checkedClaim, claimOldest } from "./next-assignment.js";
import type { RouteContext } from "./route-context.js";

/** The runner as a host's kind sees it. */
export const workRunner = (runner: RunnerIdentity): WorkRunner => ({
  organizationId: runner.organizationId,
  memberId: runner.memberId,
  runnerId: runner.runnerId,
  protocolVersion: runner.protocolVersion,
  capabilities: runner.capabilities,
});

function toWorkAssignment(ctx: RouteContext, kind: HostWorkKind, claim: WorkClaim): WorkAssignment {
  return {
    taskId: claim.taskId,
    kind: kind.kind,
    attempt: claim.attempt,
    leaseExpiresAt: claim.leaseExpiresAt.toISOString(),
    heartbeatIntervalMs: ctx.heartbeatIntervalMs,
    input: claim.input,
    ...(claim.traceparent ? { traceparent: claim.traceparent } : {}),
  };
}

/**
 * Claims the runner's next task of the host's kinds it named, in the order named; null when none
 * waits. A kind the channel does not serve finds nothing; one whose claim fails is logged and
 * passed over (the runner's next look tries it again), never the runner's error.
 */
export async function claimHostWork(ctx: RouteContext, runner: RunnerIdentity, asked: readonly string[] | undefined): Promise<WorkAssignment | null> {
  for (const name of asked ?? []) {
    const kind = isBuiltInKind(name) ? undefined : ctx.workKinds.byName(name);
    const claim = kind ? await claimOf(ctx, kind, runner) : null;
    if (kind && claim) {
      ctx.logger.info("desktop runner: task claimed", { taskId: claim.taskId, runnerId: runner.runnerId, attempt: claim.attempt, kind: kind.kind });
      return toWorkAssignment(ctx, kind, claim);
    }
  }
  return null;
}

async function claimOf(ctx: RouteContext, kind: HostWorkKind, runner: RunnerIdentity): Promise<WorkClaim | null> {
  try {
    return await kind.claimNext(workRunner(runner), ctx.leaseMs);
  } catch (error) {
    ctx.logger.warn("desktop runner: a work kind's claim failed", { kind: kind.kind, runnerId: runner.runnerId, error: errorFacts(error) });
    return null;
  }
}

/** Whether a claim names a kind of the host's that this channel serves. */
export const asksHostWork = (ctx: RouteContext, asked: readonly string[] | undefined): boolean =>
  (asked ?? []).some((name) => !isBuiltInKind(name) && ctx.workKinds.byName(name));

/**
 * The runner's next task of the kinds it named: the oldest remote-session one, else one of the
 * host's kinds (protocol 4). `more` spares the runner a claim that would find nothing: it asks
 * again only while more waits — and whenever it was handed a task while it named a host's kind
 * (whose queue the channel cannot see), so a host's task waits at most one more claim.
 */
export async function claimAnyKind(
  ctx: RouteContext,
  runner: RunnerIdentity,
  kinds: readonly string[] | undefined,
): Promise<{ assignment: ClaimedAssignment | null; more: boolean }> {
  const taken = kindsToClaim(runner, kinds);
  const ours = await checkedClaim(ctx, runner, await claimOldest(ctx, runner, taken), taken);
  if (!asksHostWork(ctx, kinds)) return ours;
  if (ours.assignment) return { ...ours, more: true };
  const assignment = await claimHostWork(ctx, runner, kinds);
  return { assignment, more: assignment !== null };
}
