import { type Budget, BudgetSchema, fail, SESSION_LIMITS, type Target } from "@openwork/remote-session-core";
import { budgetForCreate } from "../budget-rules.js";
import { CreateSessionInputSchema } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import { type Capability, defineCapability } from "./capability.js";
import { declaredFields } from "../target-declarations.js";
import { nextRead } from "./next-step.js";
import { provenanceOf } from "./provenance.js";

const base = CreateSessionInputSchema.shape;

/** `a, b and c`. */
const spelled = (names: readonly string[]) => (names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`);

/** Each argument the targets give other names for, with those names (`createArgumentAliases`) and what it names (the target's label). */
function aliasGroups(targets: readonly Target[]): Map<string, { aliases: string[]; names: string }> {
  const groups = new Map<string, { aliases: string[]; names: string }>();
  for (const target of targets) {
    for (const [alias, of] of Object.entries(target.createArgumentAliases ?? {})) {
      const group = groups.get(of) ?? { aliases: [], names: target.label.toLowerCase() };
      if (!group.aliases.includes(alias)) groups.set(of, { ...group, aliases: [...group.aliases, alias] });
    }
  }
  return groups;
}

/** The arguments with each alias replaced by the argument it names. */
function withoutAliases(args: Record<string, unknown>, groups: ReturnType<typeof aliasGroups>): Record<string, unknown> {
  const kept = { ...args };
  for (const [of, { aliases }] of groups) {
    const value = [of, ...aliases].map((name) => kept[name]).find((v) => v !== undefined);
    for (const alias of aliases) delete kept[alias];
    if (value !== undefined) kept[of] = value;
  }
  return kept;
}

/**
 * `remote-session:create`'s arguments, built from the targets handed in: `target` is one of their
 * names, and each target's own arguments are accepted for that target only. `instructions` is
 * the proposal's name for `prompt`.
 */
export function createArgs(targets: readonly Target[]) {
  const owners = new Map<string, string[]>();
  const extra: Record<string, z.ZodType> = {};
  for (const target of targets) {
    for (const [key, schema] of Object.entries(target.createArguments ?? {})) {
      extra[key] ??= schema;
      owners.set(key, [...(owners.get(key) ?? []), target.name]);
    }
  }
  const groups = aliasGroups(targets);
  for (const [of, { aliases }] of groups) {
    for (const alias of aliases) {
      extra[alias] = extra[of]!.describe(`Same as ${of}.`);
      owners.set(alias, owners.get(of)!);
    }
  }
  const names = targets.map((t) => t.name);
  return z
    .strictObject({
      target: (names.length > 0 ? z.enum(names as [string, ...string[]]) : z.never())
        .optional()
        .describe(`Where the session runs: ${targets.map((t) => `${t.name} (${t.description ?? t.label})`).join(", ")}.`),
      title: base.title.describe("A short title for the session."),
      prompt: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("The first message to run in the session."),
      instructions: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("Same as prompt."),
      model: base.model,
      idempotencyKey: base.idempotencyKey.describe("Retrying with the same key returns the first result instead of a second session."),
      budget: BudgetSchema.optional().describe(
        "What this session, and every session it starts, may spend together: tokens (in and out), costUsd, runningMs. Reached, the session pauses (waiting_input, pending.kind budget) until the member raises it.",
      ),
      ...extra,
    })
    .refine((a) => !(a.prompt && a.instructions && a.prompt !== a.instructions), {
      message: "give prompt or instructions, not two different texts",
      path: ["instructions"],
    })
    .superRefine((a: Record<string, unknown>, ctx) => {
      for (const [of, { aliases, names }] of groups) {
        if (new Set([of, ...aliases].map((k) => a[k]).filter((v) => v !== undefined)).size <= 1) continue;
        ctx.addIssue({ code: "custom", path: [aliases.at(-1)!], message: `${spelled([of, ...aliases])} name the same ${names}: give one, or the same value` });
      }
      if (a.target === undefined) return;
      for (const [key, by] of owners) {
        if (a[key] !== undefined && !by.includes(String(a.target)))
          ctx.addIssue({ code: "custom", path: [key], message: `${key} applies to ${by.join(", ")} sessions only` });
      }
    });
}

/** Create's one-line summary, naming the targets a caller is offered. */
export const createSummary = (targets: readonly Target[]) =>
  `Start a chat session on ${targets.map((t) => t.description ?? t.label).join(" or ") || "a target"}, optionally with a first prompt. Returns a sessionId to send to and read.`;

/** Builds create over the targets handed in. */
export function createCapability(targets: readonly Target[]): Capability {
  const groups = aliasGroups(targets);
  return defineCapability({
    action: "create",
    summary: createSummary(targets),
    keywords: ["start", "new", "session", "remote", "chat", "run", "delegate", "web", ...targets.map((t) => t.name)],
    write: true,
    args: createArgs(targets),
    run: async (env, args) => {
      const {
        target: named,
        title,
        prompt: given,
        instructions,
        model,
        idempotencyKey,
        budget: asked,
        ...rest
      } = args as Record<string, unknown> & {
        title: string;
        budget?: Budget;
      };
      const target = await env.catalog.resolve(env.call, named as string | undefined, "create");
      const prompt = (given ?? instructions) as string | undefined;
      const extra = withoutAliases(rest, groups);
      const foreign = Object.keys(extra).filter((key) => !(key in (target.createArguments ?? {})));
      if (foreign.length > 0) {
        fail("invalid_capability_arguments", `${foreign.join(", ")} do not apply to ${target.name} sessions`, {
          issues: foreign.map((path) => ({ path, message: `not an argument of ${target.name} sessions` })),
        });
      }
      // A person's session gets the host's rules; an engine's is carved from the budgets above it.
      const budget = env.spawner ? asked : budgetForCreate(await env.budgetRules(env.call), asked);
      const input = { title, ...(prompt ? { prompt } : {}), ...(model ? { model: model as never } : {}), ...(budget ? { budget } : {}), extra };
      // With a key, every retry works on the session the key's first attempt reserved. A call
      // from a session's engine makes that session the spawner (its credential, never arguments).
      const result = await env.sessions.create(env.call, target, input, {
        ...(typeof idempotencyKey === "string" ? { idempotencyKey } : {}),
        ...(env.spawner ? { spawn: { spawnerId: env.spawner, rules: env.spawnRules } } : {}),
        admit: () => env.ledger.takeRateLimit(env.call, env.createRateLimit),
      });
      const { fields, spawnedBy, depth, ...created } = result;
      const provenance = await provenanceOf(env, { spawnedBy: spawnedBy ?? null, depth: depth ?? 0 });
      return {
        ...created,
        ...provenance,
        ...declaredFields(target, "create", fields),
        title,
        targetLabel: target.label,
        lastActivityAt: new Date().toISOString(),
        next: nextRead(result.sessionId, { from: "start" }),
      };
    },
  });
}
