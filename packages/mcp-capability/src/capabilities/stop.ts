import { type LedgerSession, SessionFailure, type Target } from "@openwork/remote-session-core";
import { MessageIdSchema } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import type { RunEnv } from "../run-env.js";
import { defineCapability } from "./capability.js";
import { nextAfter } from "./next-step.js";
import { exactlyOneSession, namedSession, namedSessionShape } from "./named-session.js";

// The latest turn is among the last messages: a turn is its prompt and the replies after it.
const TURN_LOOKUP_LIMIT = 100;

/** The id of the prompt that started the session's latest turn; undefined when the target could not say within the call. */
async function currentTurn(env: RunEnv, target: Target, session: LedgerSession): Promise<string | null | undefined> {
  const latest = await env.sessions.read(env.call, target, session, { from: "end", limit: TURN_LOOKUP_LIMIT, waitMs: 0 });
  if (latest.awaitingTarget) return undefined;
  return latest.messages.findLast((m) => m.role === "user")?.id ?? null;
}

export const stop = defineCapability({
  action: "stop",
  summary:
    "Stop the running turn of a remote session (or cancel work not yet delivered to a desktop). With messageId, only if that prompt's turn is the current one.",
  keywords: ["cancel", "abort", "halt", "interrupt", "kill"],
  write: true,
  args: z
    .strictObject({
      ...namedSessionShape,
      messageId: MessageIdSchema.optional().describe(
        "Stop only if the current turn is the one this prompt (a send's messageId) started; else nothing is stopped (reason different_turn).",
      ),
      cascade: z.boolean().optional().describe("Also stop every session this one started, and theirs in turn."),
    })
    .refine(...exactlyOneSession),
  run: async (env, { sessionId: named, commandId, requestId, messageId, cascade }) => {
    const found = await namedSession(env, { sessionId: named, commandId, requestId }, "stop");
    const { sessionId, target } = found;
    let session = found.session;
    if (messageId !== undefined) {
      // The guard of OpenWork's stop: a stop meant for one turn never cuts a newer one short.
      const turn = await currentTurn(env, target, session);
      session = (await env.ledger.find(env.call, sessionId)) ?? session;
      if (turn !== messageId) {
        const next = nextAfter(sessionId, session.state);
        const reason =
          turn === undefined
            ? { reason: "turn_unknown", note: "the desktop did not say which turn runs; nothing was stopped: try again" }
            : { reason: "different_turn", currentMessageId: turn };
        return { sessionId, target: target.name, stopped: false, ...reason, state: session.state, ...(next ? { next } : {}) };
      }
    }
    // With cascade, the tree's right to start sessions ends in the statement that records the stop.
    const { stopped } = await env.sessions.stop(env.call, target, session, { cascade: cascade === true });
    // One shape whatever the target: did it stop something, and where the session stands now.
    const { state } = (await env.ledger.find(env.call, sessionId)) ?? session;
    const next = nextAfter(sessionId, state);
    const tree = cascade ? { cascade: await stopTree(env, sessionId) } : {};
    return { sessionId, target: target.name, stopped, state, ...tree, ...(next ? { next } : {}) };
  },
});

// Passes over the tree until one finds nothing left to stop. A stop marks its session before it
// reads the tree, and the mark waits for a spawn that holds the spawner's row: a spawn that won
// that race has committed and shows up on the next pass, one level deeper each time, so the
// passes end within the deepest chain the ledger keeps (64) and two more.
const TREE_PASSES = 66;

/**
 * Stops every session below `sessionId` in its spawn tree, parents before children, each
 * through its own target; one that fails is reported, and the rest are still stopped.
 */
async function stopTree(env: RunEnv, sessionId: string) {
  const done = new Map<string, { sessionId: string; stopped: boolean; state: string; error?: string }>();
  for (let pass = 0; pass < TREE_PASSES; pass++) {
    const pending = (await env.ledger.tree(env.call, sessionId)).filter((s) => !done.has(s.id) && !ENDED.has(s.state));
    if (pending.length === 0) break;
    for (const session of pending) done.set(session.id, await stopOne(env, session));
  }
  const sessions = [...done.values()];
  return { stopped: sessions.filter((s) => s.stopped).length, sessions };
}

const ENDED: ReadonlySet<string> = new Set(["stopped", "expired"]);

async function stopOne(env: RunEnv, session: LedgerSession) {
  try {
    const target = await env.catalog.resolve(env.call, session.target, "stop");
    const { stopped } = await env.sessions.stop(env.call, target, session);
    const { state } = (await env.ledger.find(env.call, session.id)) ?? session;
    return { sessionId: session.id, stopped, state };
  } catch (error) {
    const code = SessionFailure.isInstance(error) ? error.error.error : "internal_error";
    return { sessionId: session.id, stopped: false, state: session.state, error: code };
  }
}
