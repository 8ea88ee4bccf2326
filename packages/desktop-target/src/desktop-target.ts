import {
  createSessionLedger,
  type LedgerSession,
  type Logger,
  newId,
  silentLogger,
  type Target,
  type TargetCall,
  WorkspaceIdSchema,
} from "@openwork/remote-session-core";
import {
  acceptsPrompt,
  answeredAfter,
  checkAnswerFits,
  inputNotPending,
  decodeCursor,
  encodeCursor,
  resumePointOf,
  sliceTranscript,
  lockSessionRow,
} from "@openwork/remote-session-core/target";
import { EngineIdSchema, LIMITS, type TaskRequirements, taskRequirements } from "@openwork/runner-protocol";
import { z } from "zod";
import type { Sql } from "postgres";
import { chooseRunner } from "./choose-runner.js";
import { placeCreate } from "./place-create.js";
import { type DesktopTimings, resolveTimings } from "./desktop-timings.js";
import { DESKTOP_ERRORS, fail } from "./desktop-errors.js";
import { asComputers, DESKTOP_ARGUMENT_ALIASES, DESKTOP_RESULT_FIELDS } from "./desktop-result-fields.js";
import { settled } from "./await-task.js";
import { builtInDialects, createDialectSet, type DialectSet } from "./dialects/index.js";
import { presenceOf } from "./presence.js";
import { cancelSessionTasks } from "./store/cancel-session-tasks.js";
import { enqueueTask, findCreateTask, holderTask } from "./store/enqueue-task.js";
import { findPinnedRunners } from "./store/find-pinned-runners.js";
import { listRunners } from "./store/list-runners.js";
import { loadSessionTasks } from "./store/load-session-tasks.js";
import { syncSessionState } from "./store/sync-session-state.js";
import { leaving } from "./store/task-state-sql.js";
import { buildTranscript } from "./transcript/build-transcript.js";
import { pendingInputOf } from "./transcript/pending-input-of.js";
import type { WakeHub } from "./wake/wake-hub.js";
import { transaction } from "./store/transaction.js";

export interface DesktopTargetOptions {
  sql: Sql;
  /** The process's wake hub: `read` with `waitMs` waits on it instead of polling the database. */
  hub: WakeHub;
  /**
   * The channel's timings the target uses: the presence window (who is online), the claim
   * deadline of a task without `deliverBy`, the wait of a relayed read or stop. Default:
   * `DEFAULT_DESKTOP_TIMINGS`; `createDesktopChannel` passes the ones it resolved.
   */
  timings?: Partial<Pick<DesktopTimings, "presenceWindowMs" | "claimDeadlineMs" | "relayWaitMs">>;
  /** The OpenWork Web link of a session, when there is one. */
  webUrl?: (session: { sessionId: string; localSessionId: string | null }) => string | undefined;
  /** The dialects the channel knows (`builtInDialects()` by default); `createDesktopChannel` passes its own set. */
  dialects?: DialectSet;
  logger?: Logger;
}

/** The furthest a store-and-forward deadline may be: a week. */
const MAX_DELIVER_BY_MS = 7 * 24 * 60 * 60_000;
/** Follow-ups a session may have waiting for its desktop at once. */
export const MAX_QUEUED_TURNS = 8;

/** The create arguments only desktops take. */
const DESKTOP_CREATE_ARGUMENTS = {
  // A computerId or a name: as long as a runner id at most.
  runner: z.string().min(1).max(LIMITS.runnerId).optional().describe("Desktop: a computerId or a desktop name, from remote-session:targets."),
  deliverBy: z.iso
    .datetime({ offset: true })
    .refine((at) => Date.parse(at) <= Date.now() + MAX_DELIVER_BY_MS, "at most 7 days ahead")
    .optional()
    .describe("Desktop: wait for a desktop until this ISO time (at most 7 days ahead) instead of failing when none is online."),
  workspaceId: WorkspaceIdSchema.optional().describe("The workspace to run in (cloud: the worker's; desktop: the desktop's)."),
  // An id (as long as a runner-minted id may be) or a name (with spaces).
  workspace: z
    .string()
    .trim()
    .min(1)
    .max(LIMITS.localId)
    .optional()
    .describe(
      "Desktop: a workspace (project) by id or name, from remote-session:targets, instead of a desktop: the session goes to the desktop that has it (online first).",
    ),
  engine: EngineIdSchema.optional().describe("Desktop: the engine to run on (from remote-session:targets); the workspace the session runs in must use it."),
  worktree: z
    .boolean()
    .optional()
    .describe("Desktop: run the session in a fresh git worktree of the workspace, named after the session, left for you afterwards."),
};
const DesktopCreateSchema = z.object(DESKTOP_CREATE_ARGUMENTS);

// A session reads as "in progress" while a turn is queued or running; only then does read wait.
const WAITABLE: ReadonlySet<string> = new Set(["queued", "running"]);

/**
 * The desktop Target: sessions run on the member's signed-in OpenWork Desktop, reached only
 * through tasks the desktop pulls over the runner channel.
 */
export function createDesktopTarget(options: DesktopTargetOptions): Target {
  const { sql, hub } = options;
  const { presenceWindowMs: windowMs, claimDeadlineMs, relayWaitMs } = resolveTimings(options.timings);
  const logger = options.logger ?? silentLogger;
  const dialects = options.dialects ?? createDialectSet(builtInDialects());
  const relayOf = dialects.relayOf;
  const ledger = createSessionLedger(sql);
  // Its transactions' hints leave through the hub's publisher, on the hub's bus.
  const store = { sql, publisher: hub.publisher };
  /** The runners a create may go to: those a pin names (looked up exactly), else the most recently seen. */
  const runnersOf = async (call: TargetCall, pin?: string) => {
    const pinned = pin === undefined ? [] : await findPinnedRunners(sql, call, pin);
    // An unknown pin is answered with the member's desktops, to choose from.
    const rows = pinned.length > 0 ? pinned : await listRunners(sql, call);
    const presence = presenceOf(rows, windowMs);
    return rows.map((row, i) => ({ ...row, online: presence[i]!.online, speaks: dialects.of(row.dialect) }));
  };
  /** What a queued session's next turn waits for: the desktop it is pinned to, and its deadline. */
  const waitingFor = async (call: TargetCall, tasks: { state: string; pinnedRunnerId: string | null; claimDeadline: Date }[]) => {
    const next = tasks.find((t) => t.state === "queued");
    if (!next) return {};
    const [runner] = next.pinnedRunnerId ? (await findPinnedRunners(sql, call, next.pinnedRunnerId)).filter((r) => r.runner_id === next.pinnedRunnerId) : [];
    return {
      fields: { waitingFor: { ...(runner ? { runner: { runnerId: runner.runner_id, name: runner.name } } : {}), expiresAt: next.claimDeadline.toISOString() } },
    };
  };
  const relay = { ...store, hub, waitMs: relayWaitMs };
  /** The desktop holding the session, refused as den-api does when it is too old for `kind` or away. */
  const holderFor = async (
    call: TargetCall,
    session: LedgerSession,
    kind: "remote_session.read" | "remote_session.stop" | "remote_session.respond",
    requirements: TaskRequirements = { protocolVersion: 1, capabilities: [] },
  ) => {
    const holder = String(session.targetRef.runnerId);
    chooseRunner(await runnersOf(call, holder), { kind, requirements }, { pin: holder, storeAndForward: false });
  };
  /** What a create answers for the task it (or an earlier attempt of it) queued, and the runner it is pinned to. */
  const createdOutcome = async (
    call: TargetCall,
    sessionId: string,
    task: { pinned_runner_id: string | null; claim_deadline: Date },
    chosen?: { runner_id: string; name: string } | null,
  ) => {
    const pinned = task.pinned_runner_id;
    const known = chosen?.runner_id === pinned ? [chosen] : [];
    const [runner] = pinned && known.length === 0 ? (await findPinnedRunners(sql, call, pinned)).filter((r) => r.runner_id === pinned) : known;
    const webUrl = options.webUrl?.({ sessionId, localSessionId: null });
    return {
      state: "queued" as const,
      ...(webUrl ? { webUrl } : {}),
      fields: { ...(runner ? { runner: { runnerId: runner.runner_id, name: runner.name } } : {}), expiresAt: task.claim_deadline.toISOString() },
    };
  };
  const webUrlOf = (session: LedgerSession) => options.webUrl?.({ sessionId: session.id, localSessionId: session.targetSessionId });

  return {
    specificationVersion: "v1",
    name: "desktop",
    label: "Desktop",
    description: "one of the member's signed-in OpenWork Desktop apps",
    // OpenWork's name for a desktop registered to the member.
    aliases: ["registered"],
    createArguments: DESKTOP_CREATE_ARGUMENTS,
    createArgumentAliases: DESKTOP_ARGUMENT_ALIASES,
    resultFields: DESKTOP_RESULT_FIELDS,
    errorCodes: DESKTOP_ERRORS.codes,
    // A follow-up runs with its own model when it names one (the desktop switches per turn).
    sendTakesModel: true,

    availability: async (call) => {
      const rows = await listRunners(sql, call);
      const machines = presenceOf(rows, windowMs);
      return { available: machines.some((m) => m.online), machines, fields: { machines: asComputers(machines, rows) } };
    },

    create: async (call, input) => {
      // A retried create (the same reserved session id) answers with the task it already queued.
      const queued = await findCreateTask(sql, call.organizationId, input.sessionId);
      if (queued) return createdOutcome(call, input.sessionId, queued);
      const extra = DesktopCreateSchema.parse(input.extra);
      const deliverBy = extra.deliverBy === undefined ? null : new Date(extra.deliverBy);
      if (deliverBy && deliverBy.getTime() <= Date.now()) {
        fail("invalid_capability_arguments", "deliverBy must be in the future");
      }
      const requirements = taskRequirements({ kind: "remote_session.create", model: input.model ?? null, worktree: extra.worktree === true });
      const { runner, workspaceId } = placeCreate(
        await runnersOf(call, extra.runner),
        { kind: "remote_session.create", requirements },
        {
          ...definedOf({ pin: extra.runner, workspace: extra.workspace, workspaceId: extra.workspaceId, engine: extra.engine, model: input.model }),
          storeAndForward: deliverBy !== null,
        },
      );
      const task = await transaction(store, async (tx, hints) => {
        // The desktop's own store: the row is taken (and its runner recorded) with the task,
        // atomically, under the row's lock; an attempt that finds it taken answers that task.
        const patch = { ...(runner ? { targetRef: { runnerId: runner.runner_id } } : {}), taken: true, expect: "queued", expectReserved: true } as const;
        if (!(await ledger.in(tx).update({ organizationId: call.organizationId, id: input.sessionId }, patch))) {
          return (
            (await findCreateTask(tx, call.organizationId, input.sessionId)) ??
            fail("session_not_active", "the session was stopped or removed before its create finished")
          );
        }
        return enqueueTask(tx, hints, call, {
          sessionId: input.sessionId,
          kind: "remote_session.create",
          title: input.title,
          prompt: input.prompt ?? null,
          model: input.model ?? null,
          workspaceId,
          worktree: extra.worktree === true,
          messageId: input.prompt ? newId("msg") : null,
          localSessionId: null,
          pinnedRunnerId: runner?.runner_id ?? null,
          requirements,
          deliverBy,
          claimWithinMs: claimDeadlineMs,
        });
      });
      logger.info("desktop target: session queued", {
        sessionId: input.sessionId,
        referenceId: call.referenceId,
        runnerId: task.pinned_runner_id,
        promptChars: input.prompt?.length ?? 0,
      });
      return createdOutcome(call, input.sessionId, task, runner);
    },

    send: async (call, session, input) => {
      if (!acceptsPrompt(session.state)) {
        fail("session_not_active", `the session is ${session.state} and takes no more prompts; create a new one`);
      }
      const holder = typeof session.targetRef.runnerId === "string" ? session.targetRef.runnerId : undefined;
      // The follow-up's model rides on its task, re-checked at claim against the member's access, as a create's.
      const requirements = taskRequirements({ kind: "remote_session.send", model: input.model ?? null });
      if (holder) chooseRunner(await runnersOf(call, holder), { kind: "remote_session.send", requirements }, { pin: holder, storeAndForward: false });
      const messageId = input.messageId ?? newId("msg");
      // Where the reply will appear for a reader: after everything the transcript holds now.
      const before = relayOf(session) ? null : buildTranscript(await loadSessionTasks(sql, session)).messages.length;
      await transaction(store, async (tx, hints) => {
        // Serialized per session by the row lock, so concurrent sends cannot both squeeze past the cap.
        await lockSessionRow(tx, session);
        const [{ waiting }] = (await tx`
          select count(*)::int as waiting from desktop_task
          where organization_id = ${session.organizationId} and session_id = ${session.id} and ${leaving(tx, "claim")}`) as unknown as [{ waiting: number }];
        if (waiting >= MAX_QUEUED_TURNS) {
          fail("queue_full", `${waiting} follow-ups already wait for this desktop; read the session and send again when one ran`, { retryAfterMs: 5_000 });
        }
        await enqueueTask(tx, hints, call, {
          sessionId: session.id,
          kind: "remote_session.send",
          title: session.title,
          prompt: input.prompt,
          model: input.model ?? null,
          workspaceId: typeof session.targetRef.workspaceId === "string" ? session.targetRef.workspaceId : null,
          messageId,
          localSessionId: session.targetSessionId,
          pinnedRunnerId: holder ?? null,
          requirements,
          deliverBy: null,
          claimWithinMs: claimDeadlineMs,
        });
        // Queued behind a running turn, the session stays running; else it is queued.
        await syncSessionState(tx, hints, dialects, session, { activity: true, lastError: null });
      });
      logger.info("desktop target: follow-up queued", { sessionId: session.id, referenceId: call.referenceId, promptChars: input.prompt.length });
      return {
        sessionId: session.id,
        messageId,
        state: "accepted",
        alreadyPresent: false,
        ...(before === null ? {} : { cursor: encodeCursor(session.id, before, before - 1) }),
      };
    },

    read: async (call, session, input) => {
      const relayed = relayOf(session);
      if (relayed) {
        await holderFor(call, session, "remote_session.read");
        return relayed.read(relay, call, session, input);
      }
      const position = decodeCursor(session.id, input.cursor);
      // Only the turns from the one holding the cursor's next message: a long session's read
      // (and each wake of a waiting one) no longer loads every event it ever had.
      const anchor = anchorOf(resumePointOf(session.id, input.cursor));
      const deadline = Date.now() + input.waitMs;
      for (;;) {
        // Listen before looking, so a change between the look and the wait is not missed.
        const stopWaiting = new AbortController();
        const changed = hub.waitForSession(
          session.id,
          Math.max(0, deadline - Date.now()),
          call.signal ? AbortSignal.any([call.signal, stopWaiting.signal]) : stopWaiting.signal,
        );
        const recorded = (await ledger.find(call, session.id)) ?? session;
        const tasks = await loadSessionTasks(sql, session, anchor?.taskId);
        const transcript = buildTranscript(tasks, anchor && tasks[0]?.id === anchor.taskId ? anchor.first : 0);
        // The running turn's own events say whether it waits on the human.
        const pending = pendingInputOf(tasks);
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
            webUrl: webUrlOf(current),
            anchorAt: (index) => anchorAt(transcript, index),
          });
          if (pending) return { ...slice, pending };
          return current.state === "queued" ? { ...slice, ...(await waitingFor(call, tasks)) } : slice;
        }
        await changed;
      }
    },

    newMessageId: () => newId("msg"),

    // The task store records the session's state itself (cancelled tasks, or a cancel request).
    stop: async (call, session) => {
      const relayed = relayOf(session);
      if (relayed) {
        await holderFor(call, session, "remote_session.stop");
        return relayed.stop(relay, call, session);
      }
      const stopped = await transaction(store, (tx, hints) => cancelSessionTasks(tx, hints, dialects, session));
      return { sessionId: session.id, stopped };
    },

    // The answer is a task for the desktop holding the session, which the turn waiting on it
    // never blocks; the call waits (like a relayed read) for the desktop to hand it to its engine.
    respond: async (call, session, input) => {
      const relayed = relayOf(session);
      if (relayed) fail("desktop_update_required", relayed.answersInApp);
      const pending = pendingInputOf(await loadSessionTasks(sql, session));
      if (pending?.id !== input.requestId) return inputNotPending(input.requestId);
      checkAnswerFits(pending.kind, input.answer);
      const requirements = taskRequirements({ kind: "remote_session.respond" });
      await holderFor(call, session, "remote_session.respond", requirements);
      const answer = { requestId: input.requestId, answer: input.answer };
      const task = await transaction(store, (tx, hints) =>
        enqueueTask(tx, hints, call, holderTask(session, { kind: "remote_session.respond", requirements, claimWithinMs: claimDeadlineMs, input: answer })),
      );
      logger.info("desktop target: answer queued", { sessionId: session.id, referenceId: call.referenceId, kind: pending.kind });
      const ended = await settled(relay, session.id, task, call.signal);
      if (ended?.state === "failed" && ended.failure_code === "input_not_pending") return inputNotPending(input.requestId);
      if (ended && ended.state !== "done") fail("desktop_request_failed", `the desktop could not deliver the answer (${ended.failure_code ?? ended.state})`);
      return {
        sessionId: session.id,
        requestId: input.requestId,
        state: ended ? "running" : "waiting_input",
        alreadyAnswered: false,
        delivered: ended !== null,
      };
    },
  };
}

/** The members of `values` that are set: an optional field is absent, never undefined. */
function definedOf<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as never;
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
