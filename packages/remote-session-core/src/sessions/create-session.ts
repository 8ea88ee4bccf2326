import { fail } from "../errors/session-error.js";
import { isSessionId, newSessionId } from "../ids.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import { checkFanOut, checkSpawn } from "../ledger/reserve-spawned-session.js";
import type { CreateOutcome, CreateResult, Target, TargetCall, TargetCreateInput } from "../target.js";
import type { CreateInput, CreateOptions } from "../sessions.js";
import type { SessionsContext } from "./sessions-context.js";

/** The session id a create's idempotency key fixed at its first attempt (none on keys older than that). */
const reservedSessionId = (reserved: Record<string, unknown> | null) =>
  typeof reserved?.sessionId === "string" && isSessionId(reserved.sessionId) ? reserved.sessionId : undefined;

const createdResult = (session: LedgerSession, state: LedgerSession["state"], { webUrl, fields }: CreateOutcome): CreateResult => ({
  sessionId: session.id,
  target: session.target,
  state,
  ...(session.spawnedBy ? { spawnedBy: session.spawnedBy, depth: session.depth } : {}),
  ...(webUrl ? { webUrl } : {}),
  ...(fields && Object.keys(fields).length > 0 ? { fields } : {}),
});

/** A create: one attempt, or with an idempotency key the attempt every retry of that key converges on. */
export async function createSession(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  input: CreateInput,
  options: CreateOptions = {},
): Promise<CreateResult> {
  const attempt = async (sessionId: string) => {
    if (options.spawn) await precheckSpawn(ctx, call, sessionId, options.spawn);
    await options.admit?.();
    return createAt(ctx, call, target, input, sessionId, options.spawn);
  };
  if (options.idempotencyKey === undefined) return attempt(newSessionId());
  const spawnedBy = options.spawn ? { spawnedBy: options.spawn.spawnerId } : {};
  const request = { operation: "create" as const, key: options.idempotencyKey, args: { target: target.name, ...input, ...spawnedBy } };
  const { result } = await ctx.ledger.idempotent(call, request, (reserved) => attempt(reservedSessionId(reserved) ?? newSessionId()), {
    reserve: () => ({ sessionId: newSessionId() }),
  });
  return result;
}

/**
 * One attempt of a create under `sessionId`. The row comes first, reserved: a target's own
 * records may reference it, and a retry of the same key finds it. The target takes it (`bind`,
 * or in its own transaction) before anything it cannot undo, so a row still reserved means
 * nothing was made for it: the core answers it and the retention pass removes it in the end.
 */
async function createAt(
  ctx: SessionsContext,
  call: TargetCall,
  target: Target,
  input: CreateInput,
  sessionId: string,
  spawn?: CreateOptions["spawn"],
): Promise<CreateResult> {
  const { ledger } = ctx;
  const { budget, ...targetInput } = input;
  const reserved = await ledger.reserve(call, { id: sessionId, target: target.name, title: input.title, state: "queued", budget }, spawn);
  if (!reserved) return fail("unknown_session", "the session id of this create belongs to someone else");
  const { session, fresh } = reserved;
  // Stopped before its target took it: nothing is made for it any more.
  if (session.reservedAt && session.state !== "queued") return createdResult(session, session.state, { state: session.state });
  const key = { organizationId: call.organizationId, id: session.id };
  const bind: TargetCreateInput["bind"] = async (binding) => {
    if (!(await ledger.update(key, { ...binding, taken: true, expect: "queued", expectReserved: true }))) {
      fail("session_not_active", "the session was stopped or removed before its create finished");
    }
  };
  const earlier = !fresh && !session.reservedAt ? { earlier: { targetSessionId: session.targetSessionId, targetRef: session.targetRef } } : {};
  let outcome: Awaited<ReturnType<typeof target.create>>;
  try {
    outcome = await target.create(call, { ...targetInput, sessionId: session.id, depth: session.depth, budgeted: session.budgeted, bind, ...earlier });
  } catch (error) {
    await ledger.discard(call, session.id).catch(() => false);
    throw error;
  }
  const { state, targetSessionId, targetRef } = outcome;
  // Only a row still queued moves: a retry finds it where a reader or a stop may have left it.
  const patch = { state, activity: true, taken: true, ...(targetSessionId ? { targetSessionId } : {}), ...(targetRef ? { targetRef } : {}) } as const;
  const recorded = await ledger.update(key, { ...patch, expect: "queued" });
  if (recorded) {
    ctx.changes.moved(session.id);
    return createdResult(session, state, outcome);
  }
  const now = await ledger.find(call, session.id);
  if (!now) return fail("unknown_session", "the session was removed before its create finished");
  return createdResult(session, now.state, outcome);
}

/**
 * The spawn rules, checked before the attempt costs a rate-limit hit (the reserve checks them
 * again under the spawner's lock). A retry whose row exists skips them: it finishes that row.
 */
async function precheckSpawn(ctx: SessionsContext, call: TargetCall, sessionId: string, spawn: NonNullable<CreateOptions["spawn"]>): Promise<void> {
  if (await ctx.ledger.find(call, sessionId)) return;
  const spawner = await ctx.ledger.find(call, spawn.spawnerId);
  checkSpawn(spawner, spawn.rules);
  checkFanOut(await ctx.ledger.liveSpawned(call, spawn.spawnerId), spawn.spawnerId, spawn.rules);
  if (spawner?.budgeted) await ctx.ledger.refuseWhilePaused(call, spawner, "this create");
}
