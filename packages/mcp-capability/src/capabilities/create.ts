import { CreateSessionInputSchema, SESSION_LIMITS } from "@openwork/remote-session-core";
import { z } from "zod";
import { defineCapability } from "./capability.js";
import { nextRead } from "./next-step.js";

const base = CreateSessionInputSchema.shape;

/** `remote-session:create`. `instructions` is the proposal's name for `prompt`; `runnerId` and OpenWork's `computerId` name a `runner`. */
export const createArgs = z
  .strictObject({
    target: z.enum(["cloud", "desktop"]).default("cloud").describe("Where the session runs: the member's cloud worker or one of their desktops."),
    title: base.title.describe("A short title for the session."),
    prompt: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("The first message to run in the session."),
    instructions: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("Same as prompt."),
    model: base.model,
    workspaceId: base.workspaceId,
    runner: base.runner.describe("Desktop only: a computerId or a desktop name, from remote-session:targets."),
    runnerId: base.runner.describe("Same as runner."),
    computerId: base.runner.describe("Same as runner (OpenWork's name)."),
    deliverBy: base.deliverBy.describe("Desktop only: wait for a desktop until this ISO time instead of failing when none is online."),
    idempotencyKey: base.idempotencyKey.describe("Retrying with the same key returns the first result instead of a second session."),
  })
  .refine((a) => !(a.prompt && a.instructions && a.prompt !== a.instructions), { message: "give prompt or instructions, not two different texts", path: ["instructions"] })
  .refine((a) => new Set([a.runner, a.runnerId, a.computerId].filter((v) => v !== undefined)).size <= 1, {
    message: "runner, runnerId and computerId name the same desktop: give one, or the same value",
    path: ["computerId"],
  })
  .refine((a) => a.target === "desktop" || (a.runner ?? a.runnerId ?? a.computerId ?? a.deliverBy) === undefined, {
    message: "runner and deliverBy apply to desktop sessions only",
    path: ["target"],
  });

export const create = defineCapability({
  action: "create",
  summary: "Start a chat session on your cloud worker or one of your desktops, optionally with a first prompt. Returns a sessionId to send to and read.",
  keywords: ["start", "new", "session", "remote", "cloud", "desktop", "chat", "run", "delegate", "web"],
  write: true,
  args: createArgs,
  run: async (env, args) => {
    const { target: targetName, instructions, runnerId, computerId, idempotencyKey, ...rest } = args;
    const prompt = rest.prompt ?? instructions;
    const runner = rest.runner ?? runnerId ?? computerId;
    const input = { ...rest, ...(prompt ? { prompt } : {}), ...(runner ? { runner } : {}) };
    const target = await env.target(targetName);
    const start = async () => {
      await env.ledger.takeRateLimit(env.call, env.createRateLimit);
      return target.create(env.call, input);
    };
    const result = idempotencyKey
      ? (await env.ledger.idempotent(env.call, { operation: "create", key: idempotencyKey, args: { target: targetName, ...input } }, start)).result
      : await start();
    return { ...result, title: input.title, lastActivityAt: new Date().toISOString(), next: nextRead(result.sessionId, { from: "start" }) };
  },
});
