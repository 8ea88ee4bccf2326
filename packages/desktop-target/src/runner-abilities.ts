import type { TaskRequirements } from "@openwork/runner-protocol/internal";
import type { Dialect } from "./dialects/dialect.js";
import type { TaskKind } from "./store/task-row.js";

/** The task kinds a runner can take: its dialect's answer for its capabilities. */
export function kindsRunnerTakes(dialect: Dialect, runner: { capabilities: readonly string[] }): TaskKind[] {
  return [...dialect.kindsTaken(runner.capabilities)];
}

/**
 * Whether a runner can take a task of this kind and these requirements, as its dialect decides
 * (ours negotiates versions and capabilities; another may have a capability per kind).
 */
export function runnerCanTake(
  dialect: Dialect,
  runner: { protocol_version: number; capabilities: readonly string[] },
  kind: TaskKind,
  requirements: TaskRequirements,
): boolean {
  return dialect.canTake({ protocolVersion: runner.protocol_version, capabilities: runner.capabilities }, kind, requirements);
}

/** The kinds a claim-next may hand a runner: what it takes, narrowed to what it asked for (all it takes when it names none). */
export function kindsToClaim(runner: { dialect: Dialect; capabilities: readonly string[] }, asked: readonly string[] | undefined): TaskKind[] {
  return kindsRunnerTakes(runner.dialect, runner).filter((kind) => !asked || asked.includes(kind));
}
