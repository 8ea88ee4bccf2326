import type { Target } from "@openwork/remote-session-core";
import type { TargetFields } from "@openwork/remote-session-core/internal";
import type { ErrorCodeRule } from "@openwork/remote-session-core/internal";

/** Where a target's own members land: create's, send's and read's results, and its entry in `targets`. */
export type FieldsOf = "create" | "send" | "read" | "targets";

/** The members each result has of its own (the core's and this capability's): no target field may take one of these names. */
const OWN_MEMBERS: Record<FieldsOf, readonly string[]> = {
  create: ["sessionId", "target", "state", "webUrl", "title", "targetLabel", "lastActivityAt", "next"],
  read: [
    ...["sessionId", "target", "state", "title", "webUrl", "messages", "cursor", "hasMore", "finalAssistantText", "partialText", "lastError", "pending"],
    ...["targetLabel", "lastActivityAt", "next", "finalTextContinues", "finalTextTruncated", "finalTextCut"],
  ],
  send: ["sessionId", "messageId", "state", "alreadyPresent", "cursor", "next"],
  targets: ["name", "label", "available", "default"],
};
// Members any result may carry: what the call set aside, what bounding cut.
const EVERY_RESULT = ["ignored", "bounded"];

/**
 * Refuses, when the source is built, targets whose declarations would clash: another name of a
 * target that names a target, a result field named like a member of the result itself, an alias of an argument the target does not take (or named
 * like one it does), or an error code two targets give different rules. A third target adds its
 * fields and codes by declaring them; nothing here names one.
 */
export function checkTargetDeclarations(targets: readonly Target[]): void {
  const rules = new Map<string, { by: string; rule: ErrorCodeRule }>();
  const names = targets.map((t) => t.name);
  for (const target of targets) {
    const taken = (target.aliases ?? []).filter((alias) => names.includes(alias));
    if (taken.length > 0) throw new Error(`target ${target.name}: its other names ${taken.join(", ")} are names of targets`);
    for (const kind of ["create", "read", "targets"] as const) {
      const clashing = Object.keys(target.resultFields?.[kind] ?? {}).filter((name) => OWN_MEMBERS[kind].includes(name) || EVERY_RESULT.includes(name));
      if (clashing.length > 0) throw new Error(`target ${target.name}: ${kind} result fields ${clashing.join(", ")} are members of the result itself`);
    }
    for (const [alias, of] of Object.entries(target.createArgumentAliases ?? {})) {
      if (!Object.hasOwn(target.createArguments ?? {}, of) || Object.hasOwn(target.createArguments ?? {}, alias)) {
        throw new Error(`target ${target.name}: create argument alias ${alias} must name another of its arguments (${of} is not one)`);
      }
    }
    for (const [code, rule] of Object.entries(target.errorCodes ?? {})) {
      const earlier = rules.get(code);
      if (earlier && earlier.rule.retryable !== rule.retryable)
        throw new Error(`error code ${code}: targets ${earlier.by} and ${target.name} disagree on retryable`);
      rules.set(code, { by: target.name, rule });
    }
  }
}

/** The target's own members of a result, as it declared them (an undeclared one is left out: the target's bug, never the caller's). */
export function declaredFields(target: Target, kind: FieldsOf, fields: TargetFields | undefined): TargetFields {
  const declared = target.resultFields?.[kind] ?? {};
  return Object.fromEntries(Object.entries(fields ?? {}).filter(([name]) => Object.hasOwn(declared, name)));
}
