import type { TaskRequirements } from "@openwork/runner-protocol";
import { dialectOf } from "./dialects/index.js";
import type { TaskKind } from "./store/task-row.js";

/** The task kinds a runner can take: its dialect's answer for its capabilities. */
export function kindsRunnerTakes(runner: { dialect?: string | undefined; capabilities: readonly string[] }): TaskKind[] {
  return [...dialectOf(runner.dialect).kindsTaken(runner.capabilities)];
}

/**
 * Whether a runner can take a task of this kind and these requirements, as its dialect decides
 * (ours negotiates versions and capabilities; another may have a capability per kind).
 */
export function runnerCanTake(
  runner: { dialect?: string | undefined; protocol_version: number; capabilities: readonly string[] },
  kind: TaskKind,
  requirements: TaskRequirements,
): boolean {
  return dialectOf(runner.dialect).canTake({ protocolVersion: runner.protocol_version, capabilities: runner.capabilities }, kind, requirements);
}

/** The kinds a claim-next may hand a runner: what it takes, narrowed to what it asked for (all it takes when it names none). */
export function kindsToClaim(runner: { dialect?: string | undefined; capabilities: readonly string[] }, asked: readonly string[] | undefined): TaskKind[] {
  return kindsRunnerTakes(runner).filter((kind) => !asked || asked.includes(kind));
}
