import type { LedgerSession, ReadResult, TargetCall } from "@openwork/remote-session-core";
import type { ReadInput } from "@openwork/remote-session-core/internal";
import { decodeCursor, resumePointOf, sliceTranscript } from "@openwork/remote-session-core/target";
import { answeredAfter } from "@openwork/remote-session-core/internal";
import type { DesktopContext } from "./desktop-context.js";
import { holderFor } from "./holder-for.js";
import { OPEN_TASK_STATES } from "./task-state.js";
import { findPinnedRunners } from "./store/find-pinned-runners.js";
import { loadSessionTasks } from "./store/load-session-tasks.js";
import { stillAsked } from "./store/asked-request.js";
import { sessionRunningTime } from "./store/session-running-time.js";
import { buildTranscript } from "./transcript/build-transcript.js";

// A session reads as "in progress" while a turn is queued or running; only then does read wait.
const WAITABLE: ReadonlySet<string> = new Set(["queued", "running"]);
// The task states of a turn in progress.
const WAITABLE_TASK: ReadonlySet<string> = new Set(OPEN_TASK_STATES);

/** The session's transcript from the cursor on, relayed from its desktop when that one keeps it; with `waitMs`, once there is news. */
export async function desktopRead(ctx: DesktopContext, call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult> {
  const relayed = ctx.dialects.relayOf(session);
  if (relayed) {
    await holderFor(ctx, call, session, "remote_session.read");
    return relayed.read(ctx.relay, call, session, input);
  }
  const position = decodeCursor(session.id, input.cursor);
  // Only the turns from the one holding the cursor's next message: a long session's read
  // (and each wake of a waiting one) no longer loads every event it ever had.
  const anchor = anchorOf(resumePointOf(session.id, input.cursor));
  const deadline = Date.now() + input.waitMs;
  for (;;) {
    // Listen before looking, so a change between the look and the wait is not missed.
    const stopWaiting = new AbortController();
    const changed = ctx.hub.waitForSession(
      session.id,
      Math.max(0, deadline - Date.now()),
      call.signal ? AbortSignal.any([call.signal, stopWaiting.signal]) : stopWaiting.signal,
    );
    const first = (await ctx.ledger.find(call, session.id)) ?? session;
    const tasks = await loadSessionTasks(ctx.sql, session, anchor?.taskId);
    const recorded = await recordedWith(ctx, call, first, tasks);
    const transcript = buildTranscript(tasks, anchor && tasks[0]?.id === anchor.taskId ? anchor.first : 0);
    // The running turn's own events say whether it waits on the human (what an answer reached is not).
    const pending = await stillAsked(ctx.sql, session, tasks);
    const current = pending ? { ...recorded, state: "waiting_input" as const } : recorded;
    const settled = answeredAfter(transcript, position) || !WAITABLE.has(current.state) || Date.now() >= deadline || call.signal?.aborted;
    if (settled) {
      stopWaiting.abort();
      const slice = sliceTranscript({
        session: current,
        target: "desktop",
        state: current.state,
        // The desktop's last error (a lost lease, a missed deadline) is the ledger's.
        transcript: { ...transcript, lastError: current.lastError },
        position,
        cursor: input.cursor,
        limit: input.limit,
        from: input.from,
        webUrl: ctx.webUrl?.({ sessionId: current.id, localSessionId: current.targetSessionId }),
        anchorAt: (index) => anchorAt(transcript, index),
      });
      const spent = { ...slice, observedSpend: await sessionRunningTime(ctx.sql, session) };
      if (pending) return { ...spent, pending };
      return current.state === "queued" ? { ...spent, ...(await waitingFor(ctx, call, tasks)) } : spent;
    }
    await changed;
  }
}

/**
 * The session's row as of `tasks` (read before them): a turn's end moves the row and its task in
 * one transaction, so when the row still shows a turn in progress and the tasks show none, that
 * end committed between the two reads, and the row is read again. Else the final reply would read
 * as news of a running turn, and the turn's end as a state with no reply.
 */
async function recordedWith(ctx: DesktopContext, call: TargetCall, recorded: LedgerSession, tasks: { state: string }[]): Promise<LedgerSession> {
  const ended = WAITABLE.has(recorded.state) && !tasks.some((task) => WAITABLE_TASK.has(task.state));
  return ended ? ((await ctx.ledger.find(call, recorded.id)) ?? recorded) : recorded;
}

/** What a queued session's next turn waits for: the desktop it is pinned to, and its deadline. */
async function waitingFor(ctx: DesktopContext, call: TargetCall, tasks: { state: string; pinnedRunnerId: string | null; claimDeadline: Date }[]) {
  const next = tasks.find((t) => t.state === "queued");
  if (!next) return {};
  const [runner] = next.pinnedRunnerId ? (await findPinnedRunners(ctx.sql, call, next.pinnedRunnerId)).filter((r) => r.runner_id === next.pinnedRunnerId) : [];
  return {
    fields: { waitingFor: { ...(runner ? { runner: { runnerId: runner.runner_id, name: runner.name } } : {}), expiresAt: next.claimDeadline.toISOString() } },
  };
}

/** The cursor's anchor — `<first>:<taskId>`, the turn whose messages start at `first` — when it is usable. */
function anchorOf(resume: { from: number; anchor?: string }): { taskId: string; first: number } | null {
  const match = /^(\d+):(.+)$/.exec(resume.anchor ?? "");
  const first = Number(match?.[1]);
  // A forged or stale anchor past the resume point would hide messages: read everything instead.
  return match && Number.isSafeInteger(first) && first <= resume.from ? { taskId: match[2]!, first } : null;
}

/** The anchor of the turn holding message `index` (the last one when `index` is past the end). */
function anchorAt(transcript: ReturnType<typeof buildTranscript>, index: number): string | undefined {
  const last = (transcript.offset ?? 0) + transcript.messages.length - 1;
  const turn = transcript.turns.findLast((t) => t.first <= Math.min(index, last));
  return turn ? `${turn.first}:${turn.taskId}` : undefined;
}
