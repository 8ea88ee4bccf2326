import { z } from "zod";
import { LIMITS } from "./limits.js";
import type { WorkKind } from "./work-kinds.js";

/**
 * The protocol version this package speaks. Bumped only for changes old runners cannot ignore.
 * 2: capability names of our own that cannot be mistaken for OpenWork's (v1 runners declared
 * `remote_session_v1`, which means OpenWork's command protocol to OpenWork desktops).
 * 3: `POST tasks/claim-next` (claim any eligible task in one request) and completions that carry
 * the attempt's last events. A runner uses them only with a gateway that answered 3 or more.
 * 4: work kinds of the host's own (`automation.run`, …) beside the remote-session ones, on the same
 * claim, lease, heartbeat, events and completion: a claim may name any kind, and one the gateway
 * does not serve finds nothing instead of a 400.
 * 5: the wake stream opens with `remote_session_stream_ready`, saying whether work waits; a runner
 * looks for work at a (re)open only when it does.
 */
export const RUNNER_PROTOCOL_VERSION = 5;

/** The gateway protocol from which a runner may use `claim-next` and events on `complete`. */
export const CLAIM_NEXT_PROTOCOL = 3;

/** The gateway protocol from which a runner may name the host's own work kinds in its claims. */
export const HOST_KINDS_PROTOCOL = 4;

/** The protocol from which a wake stream opens with `remote_session_stream_ready` (the gateway sends it to runners of 5 or more). */
export const STREAM_READY_PROTOCOL = 5;

/**
 * Capabilities a runner of this protocol may declare. New work is gated by a capability, never by
 * a version bump, so an old runner is simply never offered what it cannot run. They are kept in
 * the runner's registration, not in its token: a token's `c` holds OpenWork's vocabulary only.
 */
export const RUNNER_CAPABILITIES = [
  /** May claim and run `remote_session.create`. */
  "session_create_v1",
  /** May claim `remote_session.send`: a follow-up prompt into a session it created. */
  "session_followup_v1",
  /** Honours `model.variant` (reasoning effort and the like) when it creates a session. */
  "model_variant_v1",
  /**
   * Reports what its engine asks the human (`input.requested` / `input.resolved` events) and may
   * claim `remote_session.respond`: the answer, while the turn it belongs to still runs.
   */
  "session_respond_v1",
  /**
   * Runs a create with `worktree: true` in a fresh git worktree of its workspace, named after the
   * session, and leaves the worktree for the human afterwards.
   */
  "worktree_v1",
] as const;

// What protocol-1 runners declared for the same promises.
const V1_NAMES: Record<string, RunnerCapability> = {
  remote_session_v1: "session_create_v1",
  remote_session_followup_v1: "session_followup_v1",
  model_variant_v1: "model_variant_v1",
};

export type RunnerCapability = (typeof RUNNER_CAPABILITIES)[number];

/**
 * A capability string as it travels. Unknown strings are allowed on the wire so a newer runner
 * can register with an older gateway; the gateway grants only the ones it knows.
 */
export const CapabilityStringSchema = z
  .string()
  .max(LIMITS.capability)
  .regex(/^[a-z][a-z0-9_]*$/, "lowercase letters, digits and underscores");

/** What a task needs from the runner that takes it; stored with the task at enqueue time. */
export interface TaskRequirements {
  protocolVersion: number;
  capabilities: RunnerCapability[];
}

/** What a runner declared (and the gateway signed into its token). */
export interface RunnerProfile {
  protocolVersion: number;
  capabilities: readonly string[];
}

/** Why a runner may not take a task. */
export type NegotiationRefusal =
  | { ok: false; reason: "protocol_version_unsupported"; need: number; have: number }
  | { ok: false; reason: "missing_capabilities"; missing: RunnerCapability[] };

const KIND_CAPABILITY = {
  "remote_session.create": "session_create_v1",
  "remote_session.send": "session_followup_v1",
  "remote_session.respond": "session_respond_v1",
} as const satisfies Record<WorkKind, RunnerCapability>;

/** The requirements of a task, derived from what it asks for. */
export function taskRequirements(task: {
  kind: WorkKind;
  model?: { variant?: string | null | undefined } | null | undefined;
  worktree?: boolean | undefined;
}): TaskRequirements {
  const capabilities: RunnerCapability[] = [KIND_CAPABILITY[task.kind]];
  if (task.model?.variant) capabilities.push("model_variant_v1");
  if (task.worktree) capabilities.push("worktree_v1");
  // Every task kind exists since protocol 1; capabilities say the rest.
  return { protocolVersion: 1, capabilities };
}

/** Decides whether a runner may take a task and, if not, why. */
export function canRunnerTake(runner: RunnerProfile, requirements: TaskRequirements): { ok: true } | NegotiationRefusal {
  if (runner.protocolVersion < requirements.protocolVersion) {
    return {
      ok: false,
      reason: "protocol_version_unsupported",
      need: requirements.protocolVersion,
      have: runner.protocolVersion,
    };
  }
  const missing = requirements.capabilities.filter((c) => !runner.capabilities.includes(c));
  return missing.length === 0 ? { ok: true } : { ok: false, reason: "missing_capabilities", missing };
}

/**
 * The known subset of what a runner declared, in canonical order: what the gateway records.
 * A protocol-1 runner's names are read in their v1 meaning.
 */
export function grantCapabilities(declared: readonly string[], protocolVersion: number = RUNNER_PROTOCOL_VERSION): RunnerCapability[] {
  const known = protocolVersion < 2 ? declared.map((c) => V1_NAMES[c]) : declared;
  return RUNNER_CAPABILITIES.filter((c) => known.includes(c));
}
