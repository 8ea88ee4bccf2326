import { randomBytes } from "node:crypto";
import { fail, newId, type Target, type TranscriptMessage } from "@openwork/remote-session-core";
import { boundText, decodeCursor, inputNotPending, type Transcript, sliceTranscript } from "@openwork/remote-session-core/target";

/**
 * A Target whose sessions answer every prompt at once with `echo: <prompt>`. It keeps each
 * session's transcript in this process (an example: a real target keeps its sessions on the
 * surface it drives) and writes no SQL: the core records the session rows.
 */
export function createEchoTarget(): Target {
  const transcripts = new Map<string, TranscriptMessage[]>();
  const message = (id: string, role: TranscriptMessage["role"], text: string): TranscriptMessage => ({
    id,
    role,
    ...boundText(text),
    toolCalls: [],
    createdAt: new Date().toISOString(),
  });
  const say = (sessionId: string, prompt: string, messageId: string) => {
    const messages = transcripts.get(sessionId) ?? [];
    messages.push(message(messageId, "user", prompt), message(`${messageId}_echo`, "assistant", `echo: ${prompt}`));
    transcripts.set(sessionId, messages);
  };
  const transcriptOf = (sessionId: string): Transcript => {
    const messages = transcripts.get(sessionId) ?? fail("unknown_session", "this echo session is gone (the process restarted)");
    const index = messages.findLastIndex((m) => m.role === "assistant");
    return { messages, partialText: null, finalAssistant: index < 0 ? null : { index, text: messages[index]!.text ?? "" } };
  };

  return {
    specificationVersion: "v1",
    name: "echo",
    label: "Echo",
    description: "an instant echo, for trying the gateway out",

    availability: async () => ({ available: true }),

    create: async (_call, input) => {
      transcripts.set(input.sessionId, []);
      if (input.prompt) say(input.sessionId, input.prompt, newId("msg"));
      return { state: "idle" };
    },

    send: async (_call, session, input) => {
      const messageId = input.messageId ?? newId("msg");
      const alreadyPresent = transcriptOf(session.id).messages.some((m) => m.id === messageId);
      if (!alreadyPresent) say(session.id, input.prompt, messageId);
      return { sessionId: session.id, messageId, state: "accepted", alreadyPresent, sessionState: "idle" };
    },

    read: async (_call, session, input) =>
      sliceTranscript({
        session,
        target: "echo",
        state: "idle",
        transcript: transcriptOf(session.id),
        position: decodeCursor(session.id, input.cursor),
        cursor: input.cursor,
        limit: input.limit,
        from: input.from,
      }),

    // Nothing ever runs long enough to stop.
    stop: async (_call, session) => ({ sessionId: session.id, stopped: false }),

    // An echo answers at once: it never asks the human anything.
    respond: async (_call, _session, input) => inputNotPending(input.requestId),

    newMessageId: () => `msg_${randomBytes(8).toString("hex")}`,
  };
}
