import { randomBytes } from "node:crypto";
import type { EventBus } from "./event-bus.js";

/** How the human answered: a permission decision, or one list of chosen labels per question. */
export type EchoAnswer = { reply: "once" | "always" | "reject" } | { answers: string[][] };

interface Waiting {
  kind: "permission" | "question";
  /** The request as `GET /permission` or `GET /question` lists it. */
  listed: { id: string; sessionID: string } & Record<string, unknown>;
  answer: (answer: EchoAnswer) => void;
}

/**
 * Requests a turn waits on, as opencode keeps them: listed per kind across every session, each
 * answered once (`permission.replied` / `question.replied`); a second answer finds nothing (404).
 */
export function createEchoRequests(bus: EventBus) {
  const waiting = new Map<string, Waiting>();
  const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

  return {
    /** Asks the human; `answer` runs when the reply comes. Returns the withdraw function (an abort). */
    ask(kind: Waiting["kind"], fields: Record<string, unknown> & { sessionID: string }, answer: Waiting["answer"]): () => void {
      const listed = { id: newId(kind === "permission" ? "per" : "que"), ...fields };
      waiting.set(listed.id, { kind, listed, answer });
      bus.publish(`${kind}.asked`, listed);
      return () => void waiting.delete(listed.id);
    },
    /** Forgets every request (the engine died: they lived in its memory). */
    clear: () => waiting.clear(),
    list: (kind: Waiting["kind"]) => [...waiting.values()].filter((w) => w.kind === kind).map((w) => w.listed),
    /** Answers a request; false when none of that kind waits under the id. */
    reply(kind: Waiting["kind"], id: string, answer: EchoAnswer): boolean {
      const found = waiting.get(id);
      if (!found || found.kind !== kind) return false;
      waiting.delete(id);
      bus.publish(`${kind}.replied`, { sessionID: found.listed.sessionID, requestID: id, ...answer });
      found.answer(answer);
      return true;
    },
  };
}

export type EchoRequests = ReturnType<typeof createEchoRequests>;
