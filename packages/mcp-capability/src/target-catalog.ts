import { defineErrorCodes, fail, type Target, type TargetCall } from "@openwork/remote-session-core";
import type { TargetAvailability } from "@openwork/remote-session-core/internal";

/** A target as one caller may use it now. */
export interface OfferedTarget {
  target: Target;
  availability: TargetAvailability;
}

/**
 * The targets handed to the source, seen only through the port: which a caller is offered (a
 * target may hide itself while unavailable), which is the default, and the live checks its
 * rules ask for. No target name is special here.
 */
export interface TargetCatalog {
  readonly targets: readonly Target[];
  /** Every target with its availability for this caller, minus those hiding while unavailable. */
  offered(call: TargetCall): Promise<OfferedTarget[]>;
  /** The configured default when offered, else the first offered target. */
  defaultOf(offered: readonly OfferedTarget[]): string | undefined;
  /** The target for a call: `name`, or the default; refused per its rules when unavailable. */
  resolve(call: TargetCall, name: string | undefined, use: "create" | "read" | "send" | "stop" | "respond"): Promise<Target>;
}

export function createTargetCatalog(targets: readonly Target[], defaultTarget?: string): TargetCatalog {
  const named = (name: string) => targets.find((t) => t.name === name);
  // Each target's refusal is built under its own codes' rules.
  const errorsOf = new Map(targets.map((t) => [t.name, defineErrorCodes(t.errorCodes ?? {})]));
  const offered = async (call: TargetCall) => {
    const all = await Promise.all(targets.map(async (target) => ({ target, availability: await target.availability(call) })));
    return all.filter(({ target, availability }) => availability.available || !target.availabilityRules?.hideWhenUnavailable);
  };
  const defaultOf = (list: readonly OfferedTarget[]) => list.find((o) => o.target.name === defaultTarget)?.target.name ?? list[0]?.target.name;

  /** Refuses a target that is unavailable when its rules say to check. */
  const check = async (call: TargetCall, target: Target, use: "create" | "read" | "send" | "stop" | "respond") => {
    const rules = target.availabilityRules;
    const checks = use === "create" ? rules?.hideWhenUnavailable || rules?.recheckOnEveryCall : rules?.recheckOnEveryCall;
    if (!checks || ((use === "read" || use === "stop") && rules?.allowWhileUnavailable?.includes(use))) return target;
    if ((await target.availability(call)).available) return target;
    const refusal = rules?.unavailableError ?? {
      code: "invalid_capability_arguments" as const,
      message: `${target.label} sessions are not available to you now`,
    };
    return errorsOf.get(target.name)!.fail(refusal.code, refusal.message, { context: { target: target.name } });
  };

  return {
    targets,
    offered,
    defaultOf,
    resolve: async (call, name, use) => {
      const chosen = name ?? defaultOf(await offered(call));
      const target = chosen === undefined ? undefined : named(chosen);
      if (!target) return fail("invalid_capability_arguments", chosen ? `no target named ${chosen} is offered here` : "no target is available to you now");
      return check(call, target, use);
    },
  };
}
