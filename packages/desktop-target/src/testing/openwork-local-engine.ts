// The local engine of the OpenWork desktop double: the visible sessions a person sees in the app,
// and what OpenWork's desktop reads of them (status, messages, the latest turn's error). A prompt
// is answered `echo: <prompt>` after `replyDelayMs`; words in the prompt script the other turns
// a real engine has: SLOW (a long turn), ASKQ (waits on a question), NOREPLY (ends without an
// answer), AUTHFAIL (the provider refuses the key).

export interface LocalError {
  code: string;
  message: string;
}

export interface LocalMessage {
  id: string;
  role: "user" | "assistant";
  text: string;
  createdAt: number;
  error: LocalError | null;
}

export interface LocalSession {
  id: string;
  workspaceId: string;
  commandId: string;
  messages: LocalMessage[];
  status: "running" | "waiting" | "idle" | "error";
  /** What a `waiting` turn asks (as OpenWork reads it from its engine's pending lists). */
  waitingFor: "permission" | "question" | null;
  /** The latest turn's error, as the desktop classifies it. */
  error: LocalError | null;
  timer: ReturnType<typeof setTimeout> | null;
}

export interface ReadPage {
  messages: LocalMessage[];
  nextCursor: string | null;
}

export interface LocalEngine {
  readonly sessions: ReadonlyMap<string, LocalSession>;
  create(commandId: string, workspaceId: string): LocalSession;
  /** Starts a turn; true when a message with `messageId` is already there (nothing is sent again). */
  prompt(session: LocalSession, text: string, messageId: string | null): boolean;
  /** Aborts the running turn: its reply ends with the engine's "Aborted" error. True: the abort was accepted. */
  abort(session: LocalSession): boolean;
  /** A page of the transcript: after `cursor` from the start, or before it (backward) from the end. Null for an unknown cursor. */
  page(session: LocalSession, input: { from: "start" | "end"; cursor: string | null; limit: number }): ReadPage | null;
  /** The person at the desktop answers what a waiting turn asks, in the app: the turn ends. */
  answerInApp(sessionId: string, text: string): void;
  close(): void;
}

export function createLocalEngine(options: { replyDelayMs: number; slowReplyMs: number }): LocalEngine {
  const sessions = new Map<string, LocalSession>();
  let nextId = 1;
  const newId = (prefix: string) => `${prefix}_${String(nextId++).padStart(8, "0")}`;
  const reply = (session: LocalSession, text: string, error: LocalError | null) => {
    session.messages.push({ id: newId("msg"), role: "assistant", text, createdAt: Date.now(), error });
    Object.assign(session, { status: error ? "error" : "idle", waitingFor: null, error, timer: null });
  };
  const endTurn = (session: LocalSession, prompt: string) => {
    if (prompt.includes("NOREPLY")) Object.assign(session, { status: "idle", timer: null });
    else if (prompt.includes("AUTHFAIL")) reply(session, "", { code: "provider_auth_failed", message: "the provider refused the API key" });
    else reply(session, `echo: ${prompt}`, null);
  };

  return {
    sessions,
    create: (commandId, workspaceId) => {
      const session: LocalSession = { id: newId("ses"), workspaceId, commandId, messages: [], status: "idle", waitingFor: null, error: null, timer: null };
      sessions.set(session.id, session);
      return session;
    },
    prompt: (session, text, messageId) => {
      if (messageId && session.messages.some((m) => m.id === messageId)) return true;
      session.messages.push({ id: messageId ?? newId("msg"), role: "user", text, createdAt: Date.now(), error: null });
      session.error = null;
      if (text.includes("ASKQ")) {
        Object.assign(session, { status: "waiting", waitingFor: "question" });
        return false;
      }
      session.status = "running";
      session.timer = setTimeout(() => endTurn(session, text), text.includes("SLOW") ? options.slowReplyMs : options.replyDelayMs);
      return false;
    },
    abort: (session) => {
      if (session.timer) clearTimeout(session.timer);
      // The engine accepts an abort even when idle; only a turn in progress ends with its error.
      if (session.status === "running" || session.status === "waiting") reply(session, "", { code: "execution_failed", message: "Aborted" });
      return true;
    },
    page: (session, { from, cursor, limit }) => {
      const at = cursor === null ? (from === "start" ? 0 : session.messages.length) : session.messages.findIndex((m) => m.id === cursor);
      if (at < 0) return null;
      if (from === "start") {
        const start = cursor === null ? 0 : at + 1;
        const messages = session.messages.slice(start, start + limit);
        return { messages, nextCursor: start + limit < session.messages.length ? (messages.at(-1)?.id ?? null) : null };
      }
      // Backward: the `limit` messages before the cursor (the newest ones without one), oldest first.
      const start = Math.max(0, at - limit);
      const messages = session.messages.slice(start, at);
      return { messages, nextCursor: start > 0 ? (messages[0]?.id ?? null) : null };
    },
    answerInApp: (sessionId, text) => {
      const session = sessions.get(sessionId);
      if (session?.status === "waiting") reply(session, `echo: answered ${text}`, null);
    },
    close: () => {
      for (const session of sessions.values()) if (session.timer) clearTimeout(session.timer);
    },
  };
}
