import { randomBytes } from "node:crypto";
import { newOpencodeMessageId } from "@openwork/cloud-target";
import type { EchoMcp, PermissionRule } from "./echo-mcp.js";
import type { EchoAnswer, EchoRequests } from "./echo-requests.js";
import type { EventBus } from "./event-bus.js";

interface TextPart {
  id: string;
  sessionID: string;
  messageID: string;
  type: "text";
  text: string;
}

interface ToolPart {
  id: string;
  sessionID: string;
  messageID: string;
  type: "tool";
  tool: string;
  callID: string;
  state: { status: "running" | "completed" | "error"; input: unknown; output?: string; title?: string; error?: string; time: { start: number; end?: number } };
}

/** What a step used, as opencode reports it when the step ends (its tokens, its cost in dollars). */
interface StepFinishPart {
  id: string;
  sessionID: string;
  messageID: string;
  type: "step-finish";
  reason: string;
  cost: number;
  tokens: { input: number; output: number; reasoning: number; cache: { read: number; write: number } };
}

/**
 * The usage the echo engine reports for a step, deterministically, so budgets can be tried without
 * a model: one token per four characters in and out, priced at a dollar per million tokens.
 */
export function echoUsage(prompt: string, reply: string) {
  const input = Math.ceil(prompt.length / 4);
  const output = Math.ceil(reply.length / 4);
  return { tokens: { input, output, reasoning: 0, cache: { read: 0, write: 0 } }, cost: (input + output) / 1_000_000 };
}

/** A message's text, its text parts together. */
const textOf = (message: EchoMessage) => message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");

const QUESTION = {
  question: "Which colour should the button be?",
  header: "Colour",
  options: [
    { label: "Red", description: "Warm" },
    { label: "Blue", description: "Cool" },
  ],
};

/**
 * Turns that call a tool the human must answer first, as the fake model's markers do on the real
 * opencode (with `bash` under an `ask` policy): `RUNBASH` asks a bash permission, `ASKQ` asks a
 * question. The engine's own words for what follows are reproduced.
 */
const TOOL_TURNS = {
  RUNBASH: {
    tool: "bash",
    input: { command: "echo bash-ran", description: "Print a marker" },
    kind: "permission",
    asked: { permission: "bash", patterns: ["echo bash-ran"], metadata: { command: "echo bash-ran" }, always: ["echo *"] },
    title: "Print a marker",
    output: () => "bash-ran\n",
  },
  ASKQ: {
    tool: "question",
    input: { questions: [QUESTION] },
    kind: "question",
    asked: { questions: [QUESTION] },
    title: "Asked 1 question",
    output: (answer: EchoAnswer) =>
      `User has answered your questions: "${QUESTION.question}"="${"answers" in answer ? (answer.answers[0] ?? []).join(", ") : ""}". You can now continue with the user's answers in mind.`,
  },
} as const;
const REFUSED = "The user rejected permission to use this specific tool call.";

export interface EchoMessage {
  info: {
    id: string;
    sessionID: string;
    role: "user" | "assistant";
    parentID?: string;
    time: { created: number; completed?: number };
    finish?: string;
    error?: { name: string; data: { message: string } };
  };
  parts: (TextPart | ToolPart | StepFinishPart)[];
}

type Status = { type: "busy" } | { type: "retry"; attempt: number; message: string; next: number };

export interface EchoSession {
  id: string;
  title: string;
  time: { created: number; updated: number };
  /** The session's permission ruleset: which MCP entries' tools it is offered. */
  permission: PermissionRule[];
  messages: EchoMessage[];
  /** The model of the last prompt that named one; later prompts use it too (as opencode). */
  model: { providerID: string; modelID: string } | null;
  status: Status | null;
  /** Prompts waiting for the running turn. */
  queue: EchoMessage[];
  /** Cancels the running turn's next step. */
  cancel: (() => void) | null;
  /** What an abort does to the running turn's reply. */
  onAbort: (() => void) | null;
}

/** How the echo engine answers. Markers in a prompt choose the turn, like the fake model's. */
export interface EchoTiming {
  /** Before the reply starts. Default 150 ms. */
  replyDelayMs: number;
  /** Between words of a `SLOW` reply. Default 300 ms. */
  slowWordMs: number;
  /**
   * The first retry delay of a `FAIL500` turn; each next one doubles, up to 30 s, as opencode
   * backs off (2 s, 4 s, 8 s: attempt 4 comes 14 s after the first failure). Default 2 s.
   */
  retryMs: number;
}

const KNOWN_PROVIDER = "echo";
// opencode's longest wait between retries when the provider names none.
const MAX_RETRY_DELAY_MS = 30_000;
const newPartId = () => `prt_${randomBytes(12).toString("hex")}`;

/**
 * The echo engine's sessions and turns, publishing the events opencode publishes. What it
 * reproduces of opencode 1.18 (seen on the real one): the reply's text part stays empty in the
 * message list while the turn runs (live text exists only as `message.part.delta` events); an
 * unknown model fails the turn before any reply, reported only as `session.error`; a provider
 * that answers 500 shows `retry` statuses until aborted; a prompt with an existing message id
 * appends its text to that message; an abort keeps the partial text and marks the reply
 * `MessageAbortedError`. Prompt markers: `SLOW` streams a word every `slowWordMs`, `FAIL500`
 * retries forever, `FAILTURN` fails before replying; `RUNBASH` and `ASKQ` wait for the human
 * ({@link TOOL_TURNS}); `CAPABILITY {json}` calls the gateway through the session's MCP entry.
 */
export function createEchoSessions(bus: EventBus, requests: EchoRequests, mcp: EchoMcp, timing: EchoTiming) {
  const sessions = new Map<string, EchoSession>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
    return () => {
      clearTimeout(timer);
      timers.delete(timer);
    };
  };

  const setStatus = (session: EchoSession, status: Status | null) => {
    session.status = status;
    bus.publish("session.status", { sessionID: session.id, status: status ?? { type: "idle" } });
    if (!status) bus.publish("session.idle", { sessionID: session.id });
  };
  const publishMessage = (message: EchoMessage) => bus.publish("message.updated", { sessionID: message.info.sessionID, info: message.info });
  const publishPart = (part: TextPart | ToolPart | StepFinishPart) =>
    bus.publish("message.part.updated", { sessionID: part.sessionID, part, time: Date.now() });

  const endTurn = (session: EchoSession) => {
    session.cancel = null;
    session.onAbort = null;
    const next = session.queue.shift();
    if (next) runTurn(session, next);
    else setStatus(session, null);
  };

  const failBeforeReply = (session: EchoSession, message: string) => {
    session.cancel = later(20, () => {
      bus.publish("session.error", { sessionID: session.id, error: { name: "UnknownError", data: { message } } });
      endTurn(session);
    });
  };

  /**
   * `CAPABILITY {json}` (to the end of the line), as the fake model on the real opencode: a call of
   * the first `…execute_capability` tool the session is offered, with that JSON as arguments.
   */
  const capabilityCall = (session: EchoSession, text: string): { tool: string; input: unknown } | undefined => {
    const match = /CAPABILITY (\{.*\})\s*$/m.exec(text);
    const tool = mcp.visibleTools(session.permission).find((name) => name.endsWith("execute_capability"));
    if (!match || !tool) return undefined;
    try {
      return { tool, input: JSON.parse(match[1]!) };
    } catch {
      return undefined;
    }
  };

  const newReply = (session: EchoSession, user: EchoMessage): EchoMessage => {
    const reply: EchoMessage = {
      info: { id: newOpencodeMessageId(), sessionID: session.id, role: "assistant", parentID: user.info.id, time: { created: Date.now() } },
      parts: [],
    };
    session.messages.push(reply);
    publishMessage(reply);
    return reply;
  };
  const complete = (reply: EchoMessage, end: Pick<EchoMessage["info"], "finish" | "error">) => {
    reply.info.time.completed = Date.now();
    Object.assign(reply.info, end);
    publishMessage(reply);
  };

  function runTurn(session: EchoSession, user: EchoMessage) {
    setStatus(session, { type: "busy" });
    const text = textOf(user);
    if (session.model && session.model.providerID !== KNOWN_PROVIDER) {
      return failBeforeReply(session, `Model not found: ${session.model.providerID}/${session.model.modelID}.`);
    }
    if (text.includes("FAILTURN")) return failBeforeReply(session, "The echo engine failed the turn before replying.");
    const reply = newReply(session, user);
    if (text.includes("FAIL500")) return retryForever(session, reply, 1);
    const marker = (Object.keys(TOOL_TURNS) as (keyof typeof TOOL_TURNS)[]).find((m) => text.includes(m));
    if (marker) return askFirst(session, user, reply, TOOL_TURNS[marker]);
    const capability = capabilityCall(session, text);
    if (capability) return callFirst(session, user, reply, capability);
    streamText(session, reply, text.includes("SLOW") ? `echo: ${text}${" more".repeat(30)}` : `echo: ${text}`, text.includes("SLOW"));
  }

  /** Streams `text` into `reply` word by word, then ends the turn; an abort keeps what was streamed. */
  function streamText(session: EchoSession, reply: EchoMessage, text: string, slow: boolean) {
    const part: TextPart = { id: newPartId(), sessionID: session.id, messageID: reply.info.id, type: "text", text: "" };
    const words = text.split(/(?<= )/);
    let streamed = "";
    const finish = (error?: EchoMessage["info"]["error"]) => {
      part.text = streamed;
      publishPart(part);
      // A step that ran to its end reports what it used, as opencode's step-finish part does.
      if (!error) finishStep(session, reply, streamed);
      complete(reply, error ? { error } : { finish: "stop" });
      endTurn(session);
    };
    const step = (index: number) => {
      if (index === words.length) return finish();
      streamed += words[index]!;
      bus.publish("message.part.delta", { sessionID: session.id, messageID: reply.info.id, partID: part.id, field: "text", delta: words[index]! });
      session.cancel = later(slow ? timing.slowWordMs : 0, () => step(index + 1));
    };
    session.cancel = later(timing.replyDelayMs, () => {
      reply.parts.push(part);
      publishPart(part);
      step(0);
    });
    // Aborted mid-reply: the partial text stays, the reply is marked aborted.
    session.onAbort = () => finish({ name: "MessageAbortedError", data: { message: "Aborted" } });
  }

  /** The step-finish part of `reply`: the usage of its prompt (the user message it answers) and of `text`. */
  function finishStep(session: EchoSession, reply: EchoMessage, text: string) {
    const user = session.messages.find((m) => m.info.id === reply.info.parentID);
    const prompt = user ? textOf(user) : "";
    const part: StepFinishPart = {
      id: newPartId(),
      sessionID: session.id,
      messageID: reply.info.id,
      type: "step-finish",
      reason: "stop",
      ...echoUsage(prompt, text),
    };
    reply.parts.push(part);
    publishPart(part);
  }

  /** A running tool part of `reply`, announced; `settle` ends it and completes the reply. */
  function toolPart(session: EchoSession, reply: EchoMessage, tool: string, input: unknown) {
    const part: ToolPart = {
      id: newPartId(),
      sessionID: session.id,
      messageID: reply.info.id,
      type: "tool",
      tool,
      callID: `call_${randomBytes(6).toString("hex")}`,
      state: { status: "running", input, time: { start: Date.now() } },
    };
    reply.parts.push(part);
    publishPart(part);
    const settle = (state: Partial<ToolPart["state"]>, end: Pick<EchoMessage["info"], "finish" | "error">) => {
      part.state = { ...part.state, ...state, time: { start: part.state.time.start, end: Date.now() } };
      publishPart(part);
      complete(reply, end);
    };
    return { part, settle };
  }

  /**
   * A call of an MCP tool the session is offered: its result (or the client's error, as opencode
   * feeds it back) feeds a second reply; an abort ends the call.
   */
  function callFirst(session: EchoSession, user: EchoMessage, reply: EchoMessage, call: { tool: string; input: unknown }) {
    const { settle } = toolPart(session, reply, call.tool, call.input);
    const aborted = new AbortController();
    void mcp.call(call.tool, call.input, aborted.signal).then((result) => {
      if (aborted.signal.aborted) return;
      settle("output" in result ? { status: "completed", output: result.output, title: "" } : { status: "error", error: result.error }, {
        finish: "tool-calls",
      });
      streamText(session, newReply(session, user), `echo: the tool said ${"output" in result ? result.output : result.error}`, false);
    });
    session.onAbort = () => {
      aborted.abort();
      settle({ status: "error", error: "Tool execution aborted" }, { error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
      endTurn(session);
    };
  }

  /**
   * A tool call that waits for the human: answered, its result feeds a second reply; refused, the
   * turn ends at the call (the engine's sentence as the tool's error); aborted, the request goes.
   */
  function askFirst(session: EchoSession, user: EchoMessage, reply: EchoMessage, turn: (typeof TOOL_TURNS)[keyof typeof TOOL_TURNS]) {
    const { part, settle } = toolPart(session, reply, turn.tool, turn.input);
    const withdraw = requests.ask(turn.kind, { sessionID: session.id, ...turn.asked, tool: { messageID: reply.info.id, callID: part.callID } }, (answer) => {
      if ("reply" in answer && answer.reply === "reject") {
        settle({ status: "error", error: REFUSED }, { finish: "tool-calls" });
        return endTurn(session);
      }
      const output = turn.output(answer);
      settle({ status: "completed", output, title: turn.title }, { finish: "tool-calls" });
      streamText(session, newReply(session, user), `echo: the tool said ${output}`, false);
    });
    session.onAbort = () => {
      withdraw();
      settle({ status: "error", error: "Tool execution aborted" }, { error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
      endTurn(session);
    };
  }

  function retryForever(session: EchoSession, reply: EchoMessage, attempt: number) {
    const delay = Math.min(timing.retryMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
    setStatus(session, { type: "retry", attempt, message: "echo provider is down", next: Date.now() + delay });
    session.cancel = later(delay, () => retryForever(session, reply, attempt + 1));
    // Aborting a retrying turn completes its reply with no finish, no error and no parts (as opencode).
    session.onAbort = () => {
      complete(reply, {});
      endTurn(session);
    };
  }

  return {
    sessions,
    create(title: string | undefined, permission: PermissionRule[] = []): EchoSession {
      const now = Date.now();
      const session: EchoSession = {
        id: `ses_${randomBytes(12).toString("hex")}`,
        title: title ?? `New session - ${new Date(now).toISOString()}`,
        time: { created: now, updated: now },
        permission,
        messages: [],
        model: null,
        status: null,
        queue: [],
        cancel: null,
        onAbort: null,
      };
      sessions.set(session.id, session);
      bus.publish("session.created", { sessionID: session.id, info: { id: session.id, title: session.title, time: session.time } });
      return session;
    },
    /** `prompt_async`: stores the prompt (or appends to the message it names) and runs or queues its turn. */
    prompt(session: EchoSession, input: { text: string; messageID?: string; model?: { providerID: string; modelID: string } }): void {
      if (input.model) session.model = input.model;
      const existing = input.messageID ? session.messages.find((m) => m.info.id === input.messageID) : undefined;
      const part: TextPart = { id: newPartId(), sessionID: session.id, messageID: "", type: "text", text: input.text };
      if (existing) {
        part.messageID = existing.info.id;
        existing.parts.push(part);
        publishPart(part);
        return;
      }
      const user: EchoMessage = {
        info: { id: input.messageID ?? newOpencodeMessageId(), sessionID: session.id, role: "user", time: { created: Date.now() } },
        parts: [part],
      };
      part.messageID = user.info.id;
      session.messages.push(user);
      publishMessage(user);
      publishPart(part);
      if (session.status) session.queue.push(user);
      else runTurn(session, user);
    },
    abort(session: EchoSession): void {
      if (!session.status) return;
      session.queue = [];
      session.cancel?.();
      if (session.onAbort) session.onAbort();
      else endTurn(session);
    },
    /**
     * The engine is killed mid-reply (SIGKILL or SIGTERM), as opencode is: what it stored stays,
     * what it held in memory goes. A reply being written stays forever without completion, error
     * or text; queued prompts stay stored, unanswered; nothing is published (it is dead).
     */
    crash(): void {
      for (const cancel of timers) clearTimeout(cancel);
      timers.clear();
      for (const session of sessions.values()) Object.assign(session, { status: null, queue: [], cancel: null, onAbort: null });
    },
    remove(session: EchoSession): void {
      session.cancel?.();
      sessions.delete(session.id);
      bus.publish("session.deleted", { sessionID: session.id, info: { id: session.id } });
    },
    close(): void {
      for (const cancel of timers) clearTimeout(cancel);
      timers.clear();
    },
  };
}

export type EchoSessions = ReturnType<typeof createEchoSessions>;
