import type { LedgerSession, ReadResult, TargetCall } from "@openwork/remote-session-core";
import type { Queryable, ReadInput, StopOutcome } from "@openwork/remote-session-core/internal";
import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import type { Hono } from "hono";
import type { TaskWaitDeps } from "../await-task.js";
import type { ChannelErrorCode } from "../channel-refusal.js";
import type { StreamFraming } from "../routes/handle-events-stream.js";
import type { RouteContext, RunnerRoutesOptions } from "../routes/route-context.js";
import type { RunnerIdentity, TaskKind } from "../store/task-row.js";

/** How a dialect's runner requests are verified. */
export interface DialectAuthentication {
  /** Whether a token must name one of this gateway's entry points as its audience. */
  checksAudience: boolean;
  /** The refusal of a runner whose member is no longer active. */
  lostMembership: ChannelErrorCode;
  /** Whether a runner known only from its token (minted elsewhere with the shared secret) is recorded on its first request. */
  recordsTokenRunner: boolean;
  /** Where a runner's capabilities come from: its token, or its registration here. */
  capabilitiesFrom: "token" | "registration";
}

/**
 * A dialect whose desktop keeps the session's transcript itself: a read or stop of a session it
 * holds is a request to that desktop, answered within the call's wait.
 */
export interface SessionRelay {
  read(deps: TaskWaitDeps, call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult>;
  stop(deps: TaskWaitDeps, call: TargetCall, session: LedgerSession): Promise<StopOutcome>;
  /** Why an answer to a permission or a question cannot go to that desktop (it takes them in its app only). */
  answersInApp: string;
}

/** What `routes` gets: the shared route context and the host's options. */
export type DialectRouteOptions = RunnerRoutesOptions & {
  presenceWindowMs: number;
  sessionRunnerTargets?(scope: { organizationId: string; memberId: string }): Promise<boolean>;
};

/** A dialect's routes: one Hono app mounted under each of `bases`; `prefixes` are the paths it answers (with their sub-paths). */
export interface DialectRoutes {
  app: Hono;
  bases: readonly string[];
  prefixes: readonly string[];
}

/**
 * One runner channel the gateway serves (a wire a desktop speaks), with everything that differs
 * from another: shared code asks the dialect of a runner, a task or a session instead of
 * branching on its name. Each lives in its own folder and is registered once (`dialects/index.ts`).
 */
export interface Dialect {
  /** Its name, as stored (`desktop_runner.dialect`, `desktop_task.claimed_via`, a session's `target_ref.dialect`). */
  readonly name: string;
  /** The task kinds a runner of this dialect takes, by its capabilities. */
  kindsTaken(capabilities: readonly string[]): readonly TaskKind[];
  /** Whether a registered runner can take a new task of `kind` with `requirements` (picking its runner). */
  canTake(runner: { protocolVersion: number; capabilities: readonly string[] }, kind: TaskKind, requirements: TaskRequirements): boolean;
  /** The part of "this runner may take task `t` now" that is the dialect's: which kinds and requirements (SQL over `t`). */
  eligibility(sql: Queryable, runner: RunnerIdentity): ReturnType<Queryable>;
  readonly authentication: DialectAuthentication;
  /** How its wake stream is framed. */
  readonly framing: StreamFraming;
  /**
   * How the gateway knows its desktop is there: `stream` (offline once its last wake stream
   * closes), or `polls` (seen by its requests; a turn whose desktop is unseen for the presence
   * window is lost, the sweeper's call).
   */
  readonly presence: "stream" | "polls";
  /**
   * Whether its desktop completes a turn's task once it has the turn, and reports the turn's
   * progress afterwards (the session's state then follows those reports, not the task).
   */
  readonly reportsProgress: boolean;
  /** Whether a session it holds records the create task's id as `commandId` (the desktop names the session by it). */
  readonly holdsByCommand: boolean;
  /** Present for a dialect whose desktops keep their transcripts (see `SessionRelay`). */
  readonly relay?: SessionRelay;
  /** Its routes, served by `createRunnerRoutes` when the host asks for the dialect. */
  routes(ctx: RouteContext, options: DialectRouteOptions): DialectRoutes;
}
