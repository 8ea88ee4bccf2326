import { canRunnerTake, type TaskRequirements } from "@openwork/runner-protocol";
import type { RunnerDialect } from "./store/runner-row.js";
import type { TaskKind } from "./store/task-row.js";

/**
 * What an OpenWork desktop needs for each kind of task, in OpenWork's vocabulary: a create is its
 * command (`remote_session_v1`); follow-ups, reads and stops are requests to the desktop that
 * holds the session (`remote_session_control_v1`). OpenWork has no request that answers a
 * permission or question: its desktops take those answers in the app only.
 */
export const OPENWORK_KIND_CAPABILITY: Partial<Record<TaskKind, string>> = {
  "remote_session.create": "remote_session_v1",
  "remote_session.send": "remote_session_control_v1",
  "remote_session.read": "remote_session_control_v1",
  "remote_session.stop": "remote_session_control_v1",
};

/** Our protocol's kinds: a runner of it relays nothing; its capabilities say which it takes. */
const OUR_KINDS: TaskKind[] = ["remote_session.create", "remote_session.send", "remote_session.respond"];

/** The task kinds a runner can take, by its dialect and capabilities. */
export function kindsRunnerTakes(runner: { dialect?: RunnerDialect | undefined; capabilities: readonly string[] }): TaskKind[] {
  if (runner.dialect !== "openwork") return OUR_KINDS;
  return (Object.keys(OPENWORK_KIND_CAPABILITY) as TaskKind[]).filter((kind) => runner.capabilities.includes(OPENWORK_KIND_CAPABILITY[kind]!));
}

/**
 * Whether a runner can take a task of this kind and these requirements: our protocol negotiates
 * versions and capabilities; an OpenWork desktop has its own capabilities per kind (and runs
 * model variants natively).
 */
export function runnerCanTake(
  runner: { dialect?: RunnerDialect | undefined; protocol_version: number; capabilities: readonly string[] },
  kind: TaskKind,
  requirements: TaskRequirements,
): boolean {
  if (runner.dialect === "openwork") return kindsRunnerTakes(runner).includes(kind);
  return canRunnerTake({ protocolVersion: runner.protocol_version, capabilities: runner.capabilities }, requirements).ok;
}
