import { CreateSessionInputSchema, fail, SESSION_LIMITS, type Target } from "@openwork/remote-session-core";
import { z } from "zod";
import { type Capability, defineCapability } from "./capability.js";
import { nextRead } from "./next-step.js";

const base = CreateSessionInputSchema.shape;
// OpenWork's and the proposal's other names for `runner`, offered when a target takes a `runner`.
const RUNNER_ALIASES = ["runnerId", "computerId"] as const;

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
  if (extra.runner) {
    for (const alias of RUNNER_ALIASES) {
      extra[alias] = extra.runner.describe("Same as runner.");
      owners.set(alias, owners.get("runner")!);
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
      ...extra,
    })
    .refine((a) => !(a.prompt && a.instructions && a.prompt !== a.instructions), { message: "give prompt or instructions, not two different texts", path: ["instructions"] })
    .refine((a: Record<string, unknown>) => new Set(["runner", ...RUNNER_ALIASES].map((k) => a[k]).filter((v) => v !== undefined)).size <= 1, {
      message: "runner, runnerId and computerId name the same desktop: give one, or the same value",
      path: ["computerId"],
    })
    .superRefine((a: Record<string, unknown>, ctx) => {
      if (a.target === undefined) return;
      for (const [key, by] of owners) {
        if (a[key] !== undefined && !by.includes(String(a.target))) ctx.addIssue({ code: "custom", path: [key], message: `${key} applies to ${by.join(", ")} sessions only` });
      }
    });
}

/** Create's one-line summary, naming the targets a caller is offered. */
export const createSummary = (targets: readonly Target[]) =>
  `Start a chat session on ${targets.map((t) => t.description ?? t.label).join(" or ") || "a target"}, optionally with a first prompt. Returns a sessionId to send to and read.`;

/** Builds create over the targets handed in. */
export function createCapability(targets: readonly Target[]): Capability {
  return defineCapability({
    action: "create",
    summary: createSummary(targets),
    keywords: ["start", "new", "session", "remote", "chat", "run", "delegate", "web", ...targets.map((t) => t.name)],
    write: true,
    args: createArgs(targets),
    run: async (env, args) => {
      const { target: named, title, prompt: given, instructions, model, idempotencyKey, ...rest } = args as Record<string, unknown> & { title: string };
      const target = await env.catalog.resolve(env.call, named as string | undefined, "create");
      const prompt = (given ?? instructions) as string | undefined;
      const runner = rest.runner ?? rest.runnerId ?? rest.computerId;
      const extra = Object.fromEntries(Object.entries({ ...rest, ...(runner ? { runner } : {}) }).filter(([key]) => !(RUNNER_ALIASES as readonly string[]).includes(key)));
      const foreign = Object.keys(extra).filter((key) => !(key in (target.createArguments ?? {})));
      if (foreign.length > 0) {
        fail("invalid_capability_arguments", `${foreign.join(", ")} do not apply to ${target.name} sessions`, {
          issues: foreign.map((path) => ({ path, message: `not an argument of ${target.name} sessions` })),
        });
      }
      const input = { title, ...(prompt ? { prompt } : {}), ...(model ? { model: model as never } : {}), extra };
      // With a key, every retry works on the session the key's first attempt reserved.
      const result = await env.sessions.create(env.call, target, input, {
        ...(typeof idempotencyKey === "string" ? { idempotencyKey } : {}),
        admit: () => env.ledger.takeRateLimit(env.call, env.createRateLimit),
      });
      return { ...result, title, targetLabel: target.label, lastActivityAt: new Date().toISOString(), next: nextRead(result.sessionId, { from: "start" }) };
    },
  });
}
