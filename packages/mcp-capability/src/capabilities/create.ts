import { CreateSessionInputSchema, SESSION_LIMITS } from "@openwork/remote-session-core";
import { cardText } from "@openwork/mcp-app-card";
import { z } from "zod";
import { defineCapability } from "./capability.js";

const base = CreateSessionInputSchema.shape;

/** `remoteSession.create`. `instructions` and `runnerId` are OpenWork's names for `prompt` and `runner`. */
export const createArgs = z
  .strictObject({
    target: z.enum(["cloud", "desktop"]).default("cloud").describe("Where the session runs: the member's cloud worker or one of their desktops."),
    title: base.title.describe("A short title for the session."),
    prompt: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("The first message to run in the session."),
    instructions: z.string().min(1).max(SESSION_LIMITS.prompt).optional().describe("Same as prompt."),
    model: base.model,
    workspaceId: base.workspaceId,
    runner: base.runner.describe("Desktop only: a runner id or a desktop name, from remoteSession.targets."),
    runnerId: base.runner.describe("Same as runner."),
    deliverBy: base.deliverBy.describe("Desktop only: wait for a desktop until this ISO time instead of failing when none is online."),
    idempotencyKey: base.idempotencyKey.describe("Retrying with the same key returns the first result instead of a second session."),
  })
  .refine((a) => !(a.prompt && a.instructions && a.prompt !== a.instructions), { message: "give prompt or instructions, not two different texts", path: ["instructions"] })
  .refine((a) => !(a.runner && a.runnerId && a.runner !== a.runnerId), { message: "give runner or runnerId, not two different values", path: ["runnerId"] })
  .refine((a) => a.target === "desktop" || (a.runner ?? a.runnerId ?? a.deliverBy) === undefined, {
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
    const { target: targetName, instructions, runnerId, idempotencyKey, ...rest } = args;
    const input = {
      ...rest,
      ...(rest.prompt ?? instructions ? { prompt: rest.prompt ?? instructions } : {}),
      ...(rest.runner ?? runnerId ? { runner: rest.runner ?? runnerId } : {}),
    };
    const target = await env.target(targetName);
    const start = async () => {
      await env.ledger.takeRateLimit(env.call, env.createRateLimit);
      return target.create(env.call, input);
    };
    const result = idempotencyKey
      ? (await env.ledger.idempotent(env.call, { operation: "create", key: idempotencyKey, args: { target: targetName, ...input } }, start)).result
      : await start();
    return { ...result, title: input.title, lastActivityAt: new Date().toISOString() };
  },
  describe: (r) => {
    const lines = [cardText(r as never)];
    if (r.runner) lines.push(`Runner: ${(r.runner as { name: string }).name}`);
    if (r.expiresAt) lines.push(`Deliver by: ${r.expiresAt}`);
    lines.push(`Next: remoteSession.read with {"sessionId":"${r.sessionId}","waitMs":20000} to follow it.`);
    return lines.join("\n");
  },
});
