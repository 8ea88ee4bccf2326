import { type LedgerSession, type ReadResult, SESSION_LIMITS, shownState, type Target, fail } from "@openwork/remote-session-core";
import { budgetShown } from "../budget-rules.js";
import { MessageIdSchema, ReadInputSchema } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import { messagesWithin, RESULT_MAX_BYTES, textWithin } from "../bound-payload.js";
import { capabilityName } from "../parse-name.js";
import { declaredFields } from "../target-declarations.js";
import type { RunEnv } from "../run-env.js";
import { defineCapability } from "./capability.js";
import { inProgress, nextRead, nextRespond, nextSend } from "./next-step.js";
import { provenanceOf } from "./provenance.js";
import { exactlyOneSession, namedSession, namedSessionShape } from "./named-session.js";

// The sessions a read names as started by the one read: the newest, as many as a spawner may keep live.
const SPAWNED_SHOWN = 32;

// A turn read by its prompt's id is looked for among the session's latest messages.
const TURN_LOOKUP_LIMIT = 100;
// Bytes of a result a final reply keeps beside the messages of its page, at least.
const FINAL_TEXT_ROOM = 2_000;

export const readArgs = ReadInputSchema.extend({
  ...namedSessionShape,
  cursor: ReadInputSchema.shape.cursor.describe("The cursor the previous read returned: only newer messages come back."),
  from: ReadInputSchema.shape.from.describe('Without a cursor: "start" (default) reads from the first message, "end" the last `limit`.'),
  limit: ReadInputSchema.shape.limit.describe("At most this many messages (1–100); fewer when they would not fit one result (hasMore says so)."),
  waitMs: ReadInputSchema.shape.waitMs.describe("Wait up to this long (≤ 25 000 ms) for something newer than the cursor."),
  messageId: MessageIdSchema.optional().describe("Read only the turn this prompt (a send's messageId) started: that prompt and the replies to it."),
  finalTextFrom: z
    .int()
    .min(0)
    .max(SESSION_LIMITS.finalText)
    .optional()
    .describe("finalAssistantText from this character on: a reply too long for one result names the read that goes on (finalTextContinues)."),
})
  .refine(...exactlyOneSession)
  .refine((a) => a.cursor === undefined || a.from === undefined, { message: "give cursor or from, not both", path: ["from"] })
  .refine((a) => a.messageId === undefined || (a.cursor === undefined && a.from === undefined), {
    message: "give messageId, or cursor/from, not both",
    path: ["messageId"],
  });

type ReadArgs = Omit<z.output<typeof readArgs>, "sessionId" | "commandId" | "requestId" | "messageId" | "finalTextFrom">;

/**
 * A read whose messages fit one result: when the page asked for would not, the same read again
 * with as many messages as fit (its own cursor, so the next read goes on from there).
 */
async function readWithin(env: RunEnv, target: Target, session: LedgerSession, input: ReadArgs): Promise<ReadResult> {
  const result = await env.sessions.read(env.call, target, session, input);
  // A long final reply goes in parts of its own (finalTextContinues): it keeps only some room here.
  const { finalAssistantText, ...rest } = result;
  const fit = messagesWithin(rest, RESULT_MAX_BYTES - (finalAssistantText === undefined ? 0 : FINAL_TEXT_ROOM));
  if (fit >= result.messages.length) return result;
  return env.sessions.read(env.call, target, session, { ...input, limit: Math.max(1, fit), waitMs: 0 });
}

/** The turn a prompt started (OpenWork's read filtered by messageId): the prompt and what answered it. */
async function readTurn(env: RunEnv, target: Target, session: LedgerSession, messageId: string, waitMs: number): Promise<ReadResult> {
  const latest = await env.sessions.read(env.call, target, session, { from: "end", limit: TURN_LOOKUP_LIMIT, waitMs });
  const start = latest.messages.findIndex((m) => m.id === messageId);
  if (start < 0 && !latest.awaitingTarget) {
    const message = `no prompt ${messageId} among the session's last ${TURN_LOOKUP_LIMIT} messages`;
    fail("invalid_capability_arguments", message, { issues: [{ path: "messageId", message }] });
  }
  const end = latest.messages.findIndex((m, i) => i > start && m.role === "user");
  const messages = start < 0 ? [] : latest.messages.slice(start, end < 0 ? undefined : end);
  // The final reply belongs to the latest turn only.
  const { finalAssistantText, ...rest } = latest;
  return { ...rest, messages, ...(end < 0 && finalAssistantText !== undefined ? { finalAssistantText } : {}) };
}

/** Where a final reply longer than reads carry stops, and how the rest is had. */
function finalTextCut(shownChars: number) {
  return {
    shownChars,
    message: `the reply goes on past the ${shownChars} characters a read carries: read the rest in the session itself (webUrl, or the app), or send the session a prompt asking for what follows its last words here`,
  };
}

/**
 * What the session spent, as recorded once the read is done (a desktop's steps are recorded as
 * they arrive, meanwhile), and for a session that started others, what its whole tree spent.
 */
async function spendOf(env: RunEnv, session: LedgerSession, spawner: boolean) {
  const now = (await env.ledger.find(env.call, session.id)) ?? session;
  if (!spawner) return { spend: now.spend, ...budgetShown(now.budget, now.spend) };
  const treeSpend = await env.ledger.treeSpend({ organizationId: env.call.organizationId, id: session.id });
  // A budget holds for the whole tree: what is left of it is what the tree has not spent.
  return { spend: now.spend, treeSpend, ...budgetShown(now.budget, treeSpend) };
}

/** The sessions `sessionId` started, newest first, as list shows them (the ledger's states). */
async function spawnedBy(env: RunEnv, sessionId: string) {
  const { sessions } = await env.ledger.list(env.call, { spawnedBy: sessionId, limit: SPAWNED_SHOWN });
  return sessions.map((s) => ({ sessionId: s.id, title: s.title, target: s.target, state: shownState(s) }));
}

export const read = defineCapability({
  action: "read",
  summary: "Read a remote session: its state and the messages after a cursor. With waitMs it waits for the reply.",
  keywords: ["transcript", "messages", "status", "result", "reply", "poll", "wait", "progress", "output"],
  write: false,
  args: readArgs,
  run: async (env, { sessionId: named, commandId, requestId, messageId, finalTextFrom = 0, ...input }) => {
    const { sessionId, session, target } = await namedSession(env, { sessionId: named, commandId, requestId }, "read");
    const result = messageId ? await readTurn(env, target, session, messageId, input.waitMs) : await readWithin(env, target, session, input);
    if (result.finalAssistantText !== undefined) result.finalAssistantText = result.finalAssistantText.slice(finalTextFrom);
    const next =
      result.pending && !result.pending.inAppOnly
        ? nextRespond(sessionId, result.pending)
        : result.hasMore || inProgress(result.state) || result.pending?.inAppOnly
          ? nextRead(sessionId, { cursor: result.cursor })
          : result.state === "idle"
            ? nextSend(sessionId)
            : undefined;
    // Nobody answered for too long: say so, rather than let it read as an ordinary wait.
    const waited = result.pending?.askedAt ? Date.now() - Date.parse(result.pending.askedAt) : 0;
    if (result.pending && waited > env.inputTimeoutMs) result.pending = { ...result.pending, overdue: true };
    const { fields, awaitingTarget: _, finalTextTruncated, observedSpend: _observed, ...core } = result;
    // Whether the member was told the session waits for them: the agent can say so instead of nudging again.
    const notified = result.pending ? await env.notified(env.call, sessionId, result.pending.askedAt) : undefined;
    const spawned = await spawnedBy(env, sessionId);
    const payload = {
      ...core,
      ...(await spendOf(env, session, spawned.length > 0)),
      ...(notified ? { notified } : {}),
      ...(await provenanceOf(env, session)),
      ...(spawned.length > 0 ? { spawned } : {}),
      ...declaredFields(target, "read", fields),
      targetLabel: target.label,
      lastActivityAt: session.lastActivityAt.toISOString(),
      ...(next ? { next } : {}),
    };
    const kept = textWithin(payload, "finalAssistantText");
    if (result.finalAssistantText === undefined) return payload;
    // The reply's last page a read carries: a reply longer than that says so, and where the rest is.
    if (kept.length === result.finalAssistantText.length)
      return finalTextTruncated ? { ...payload, finalTextCut: finalTextCut(finalTextFrom + kept.length) } : payload;
    // The same read again answers the same page; from there on it carries the rest of the reply.
    const again = messageId
      ? { messageId }
      : { ...(input.cursor ? { cursor: input.cursor } : input.from ? { from: input.from } : {}), limit: Math.max(1, result.messages.length) };
    const finalTextContinues = { name: capabilityName("read"), body: { sessionId, ...again, finalTextFrom: finalTextFrom + kept.length } };
    return { ...payload, finalAssistantText: kept, finalTextContinues };
  },
});
