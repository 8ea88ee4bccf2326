import { newId, type Target, type TranscriptMessage } from "@openwork/remote-session-core";
import type { PendingInput, SessionState } from "@openwork/remote-session-core/internal";
import { boundText, decodeCursor, inputNotPending, sliceTranscript } from "@openwork/remote-session-core/target";

/** One session of the scripted target: what the test made it say and where it stands. */
export interface ScriptedSession {
  state: SessionState;
  messages: TranscriptMessage[];
  pending?: PendingInput;
  /** The whole text of the last reply (its message holds it cut to the per-message bound). */
  finalText?: string;
}

/** A target the test drives by hand; it answers every read at once, as real targets do outside a running turn. */
export interface ScriptedTarget extends Target {
  sessions: Map<string, ScriptedSession>;
  /** Every read the core made of it. */
  reads: number;
  /** Every send it took, with the input the core passed on. */
  sends: Record<string, unknown>[];
  /** The sessions whose stop it took. */
  stopsTaken: Set<string>;
  /** Ends the running turn with `text` (or moves it to `state`). */
  reply(sessionId: string, text: string, state?: SessionState): void;
  /** The running turn asks the human. */
  ask(sessionId: string, pending: PendingInput): void;
}

const message = (id: string, role: TranscriptMessage["role"], text: string): TranscriptMessage => ({
  id,
  role,
  toolCalls: [],
  createdAt: new Date().toISOString(),
  ...boundText(text),
});

/**
 * `stopsLater`: a stop is taken and the turn winds down later, as a desktop's does (its runner
 * cancels on its next request): the answer says stopped and moves no state.
 */
export function createScriptedTarget(
  name = "cloud",
  options: { sendTakesModel?: boolean; aliases?: readonly string[]; stopsLater?: boolean } = {},
): ScriptedTarget {
  const sessions = new Map<string, ScriptedSession>();
  const of = (id: string) => sessions.get(id)!;
  const target: ScriptedTarget = {
    specificationVersion: "v1",
    name,
    label: name[0]!.toUpperCase() + name.slice(1),
    ...(options.sendTakesModel ? { sendTakesModel: true } : {}),
    ...(options.aliases ? { aliases: options.aliases } : {}),
    sessions,
    reads: 0,
    sends: [],
    stopsTaken: new Set(),
    availability: async () => ({ available: true }),
    // Each session's receipt is `cmd_<its id>` (the test knows it without a create result field).
    sessionOfReceipt: async (_call, receipt) => {
      const id = receipt.commandId?.startsWith("cmd_") ? receipt.commandId.slice(4) : null;
      return id && sessions.has(id) ? id : null;
    },
    create: async (_call, input) => {
      const messages = input.prompt ? [message(newId("msg"), "user", input.prompt)] : [];
      sessions.set(input.sessionId, { state: input.prompt ? "running" : "idle", messages });
      return { state: of(input.sessionId).state };
    },
    send: async (_call, session, input) => {
      target.sends.push({ ...input });
      const messageId = input.messageId ?? newId("msg");
      of(session.id).messages.push(message(messageId, "user", input.prompt));
      of(session.id).state = "running";
      return { sessionId: session.id, messageId, state: "accepted", alreadyPresent: false, sessionState: "running" };
    },
    read: async (_call, session, input) => {
      target.reads++;
      const scripted = of(session.id);
      const index = scripted.messages.findLastIndex((m) => m.role === "assistant");
      const slice = sliceTranscript({
        session,
        target: name,
        state: scripted.state,
        transcript: {
          messages: scripted.messages,
          partialText: null,
          finalAssistant: index < 0 || scripted.state === "running" ? null : { index, text: scripted.finalText ?? "" },
        },
        position: decodeCursor(session.id, input.cursor),
        cursor: input.cursor,
        limit: input.limit,
        from: input.from,
      });
      return scripted.pending ? { ...slice, pending: scripted.pending } : slice;
    },
    stop: async (_call, session) => {
      const scripted = of(session.id);
      if (scripted.state !== "running" && scripted.state !== "waiting_input") return { sessionId: session.id, stopped: false };
      target.stopsTaken.add(session.id);
      if (options.stopsLater) return { sessionId: session.id, stopped: true };
      scripted.state = "stopped";
      delete scripted.pending;
      return { sessionId: session.id, stopped: true, sessionState: "stopped" };
    },
    // The pending request is answered once, as an engine takes it; anything else is not pending.
    respond: async (_call, session, input) => {
      const scripted = of(session.id);
      if (scripted.pending?.id !== input.requestId) return inputNotPending(input.requestId);
      delete scripted.pending;
      scripted.state = "running";
      return { sessionId: session.id, requestId: input.requestId, state: "running", alreadyAnswered: false, delivered: true, sessionState: "running" };
    },
    newMessageId: () => newId("msg"),
    reply: (sessionId, text, state = "idle") => {
      of(sessionId).messages.push(message(newId("msg"), "assistant", text));
      of(sessionId).finalText = text;
      of(sessionId).state = state;
      delete of(sessionId).pending;
    },
    ask: (sessionId, pending) => {
      of(sessionId).state = "waiting_input";
      of(sessionId).pending = pending;
    },
  };
  return target;
}
