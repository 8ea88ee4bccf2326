import type { TaskEvent, WorkCompleteRequest } from "@openwork/runner-protocol/internal";

/**
 * A runner as a host's work kind sees it: whose it is (every task is scoped to its member, like
 * the remote-session ones) and what it declared at its token mint.
 */
export interface WorkRunner {
  readonly organizationId: string;
  readonly memberId: string;
  readonly runnerId: string;
  readonly protocolVersion: number;
  readonly capabilities: readonly string[];
}

/** An attempt of a host's task that a runner just claimed: what its assignment carries. */
export interface WorkClaim {
  /** The task's id; it starts with the kind's `idPrefix`. */
  taskId: string;
  /** 1 for the first claim, one more for each re-claim. */
  attempt: number;
  leaseExpiresAt: Date;
  /** The kind's own fields, read by the runner's handler for the kind (`assignment.input`). */
  input: Record<string, unknown>;
  /** The W3C trace context of what queued the task, if the host records traces. */
  traceparent?: string;
}

/** A heartbeat's answer: whether the attempt still holds its lease, until when, and whether it should stop. */
export interface WorkLease {
  leaseValid: boolean;
  leaseExpiresAt: Date | null;
  cancelRequested: boolean;
}

/**
 * Why a host's kind refused a runner's post, in the channel's words: `not_found` (no such task
 * of this runner: another member's looks the same), `lease_lost` (the attempt is not the one
 * holding the task), `sequence_gap` / `event_conflict` (events out of order, or a replay that
 * differs), `completion_conflict` (completed differently before). The runner stops the attempt
 * on each of them, as it does for a remote-session task.
 */
export interface WorkRefusal {
  refused: "not_found" | "lease_lost" | "sequence_gap" | "event_conflict" | "completion_conflict";
  message: string;
}

/** A completion of a host's task as the kind receives it: the runner's body without its next claim (each `status` with its own fields). */
export type WorkCompletion = WorkCompleteRequest extends infer R ? (R extends WorkCompleteRequest ? Omit<R, "next"> : never) : never;

/**
 * A kind of work a host runs on the desktops' channel beside the remote-session kinds (an
 * OpenWork Automation run, say): its tasks live in the host's own table with its own lifecycle
 * words and its own eligibility, and reach the runner through the same claim, lease, heartbeat,
 * events and completion, with the same token and wake stream. The channel authenticates the
 * runner, checks every body against the protocol and answers the runner; the kind keeps its
 * rows. A runner claims a kind only by naming it (protocol 4), so no runner is ever handed work
 * it has no handler for.
 */
export interface HostWorkKind {
  /** Dotted lowercase words, not a `remote_session` kind: `automation.run`. */
  readonly kind: string;
  /**
   * What every task id of the kind starts with (`arun_`): the channel sends a task route to the
   * kind by it. Lowercase letters and digits then `_`; not `rst_` (the remote-session tasks').
   */
  readonly idPrefix: string;
  /**
   * Claims the oldest task of the kind this runner may take now, for `leaseMs`, or null. Run it
   * as one guarded statement (`for update skip locked`): runners of one member race for it.
   */
  claimNext(runner: WorkRunner, leaseMs: number): Promise<WorkClaim | null>;
  /** Extends the attempt's lease by `leaseMs` while it holds the task. */
  heartbeat(runner: WorkRunner, taskId: string, attempt: number, leaseMs: number): Promise<WorkLease | WorkRefusal>;
  /** Stores the attempt's next events (consecutive, starting where the last post ended). */
  appendEvents(runner: WorkRunner, taskId: string, attempt: number, events: readonly TaskEvent[]): Promise<{ nextSequence: number } | WorkRefusal>;
  /**
   * Ends the attempt (its trailing events included), in the kind's own words (`state`). The same
   * completion again is answered the same; a different one is a `completion_conflict`.
   */
  complete(runner: WorkRunner, taskId: string, completion: WorkCompletion): Promise<{ state: string } | WorkRefusal>;
  /** Called on each sweep of the channel: what the kind does with leases that ran out, deadlines passed. */
  sweep?(): Promise<void>;
  /**
   * Whether a task of the kind waits for this runner now: what a wake stream's opening tells a
   * runner of protocol 5, which then claims only when something waits (a fleet reconnecting after
   * a restart asks for nothing). Without it the channel tells every such runner to look.
   */
  waiting?(runner: WorkRunner): Promise<boolean>;
}

/** The host's kinds of one channel, checked once, found by name and by task id. */
export interface HostWorkKinds {
  readonly all: readonly HostWorkKind[];
  byName(kind: string): HostWorkKind | undefined;
  /** The kind whose `idPrefix` the id starts with. */
  ofTask(taskId: string): HostWorkKind | undefined;
}

const MAX_HOST_KINDS = 13;
const KIND_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const ID_PREFIX = /^[a-z][a-z0-9]{0,15}_$/;

/**
 * Checks the host's kinds: well-formed, distinct names and prefixes, none of them the
 * remote-session ones. A mistake here is the host's programming error: a TypeError at start-up.
 */
export function hostWorkKinds(kinds: readonly HostWorkKind[] = []): HostWorkKinds {
  // A claim names at most 16 kinds, three of them the remote-session ones.
  if (kinds.length > MAX_HOST_KINDS) throw new TypeError(`at most ${MAX_HOST_KINDS} work kinds of the host's own`);
  const byName = new Map<string, HostWorkKind>();
  const byPrefix = new Map<string, HostWorkKind>();
  for (const kind of kinds) {
    if (!KIND_NAME.test(kind.kind) || kind.kind.length > 64 || kind.kind.startsWith("remote_session.")) {
      throw new TypeError(`work kind "${kind.kind}": dotted lowercase words, not a remote_session kind`);
    }
    if (!ID_PREFIX.test(kind.idPrefix) || kind.idPrefix === "rst_") {
      throw new TypeError(`work kind "${kind.kind}": idPrefix "${kind.idPrefix}" must be lowercase letters and digits then "_", not "rst_"`);
    }
    if (byName.has(kind.kind) || byPrefix.has(kind.idPrefix)) throw new TypeError(`work kind "${kind.kind}": its name or idPrefix is taken`);
    byName.set(kind.kind, kind);
    byPrefix.set(kind.idPrefix, kind);
  }
  return {
    all: [...kinds],
    byName: (kind) => byName.get(kind),
    ofTask: (taskId) => byPrefix.get(taskId.slice(0, taskId.indexOf("_") + 1)),
  };
}

/** Whether a kind's answer is a refusal. */
export const isRefusal = (answer: object): answer is WorkRefusal => "refused" in answer;
