import { abortableSleep } from "./abortable-sleep.js";

// A double of OpenWork's remote-session desktop runner (D3/D4 and its bridge), written from §3.2
// of the wire spec: it registers stepping its capabilities down on 400, polls work every
// `pollMs` (60 s in the field) plus `wake()`, claims commands and creates a visible local session
// in a small local engine, reports progress, drains read/send/stop requests, and retires its
// credential on any 401/403. It records every request it sends.

/** One message of the double's local engine. */
interface LocalMessage {
  id: string;
  role: "user" | "assistant";
  text: string;
  createdAt: number;
}

interface LocalSession {
  id: string;
  workspaceId: string;
  messages: LocalMessage[];
  status: "running" | "waiting" | "idle" | "error";
  /** What a `waiting` turn asks (as OpenWork reads it from its engine's pending lists). */
  waitingFor: "permission" | "question" | null;
  timer: ReturnType<typeof setTimeout> | null;
  commandId: string;
}

export interface OpenworkDesktopDoubleOptions {
  baseUrl: string;
  /** A member session token for the mint. */
  memberToken: string;
  runnerId: string;
  /** Capability sets tried in order, stepping down on 400 (D4-bridge's). */
  capabilitySets?: string[][];
  /** The work poll (60 s in the field). */
  pollMs?: number;
  /** How often pending requests are drained while a session is active (2 s in the field). */
  drainMs?: number;
  /** How long the local engine takes to answer a prompt; prompts with SLOW take 30 s. */
  replyDelayMs?: number;
  /** Progress reports go out on change, and at least this often. Default 60 s. */
  reportEveryMs?: number;
  /** Told of each command it claimed (a benchmark's clock). */
  onCommand?(commandId: string): void;
}

export interface OpenworkDesktopDouble {
  readonly requests: string[];
  /** The capabilities its token was minted with (after any step-down). */
  readonly capabilities: string[];
  /** Whether it retired its credential (a 401/403). */
  readonly retired: boolean;
  /** Its local sessions (what a person sees in the desktop app). */
  readonly sessions: ReadonlyMap<string, LocalSession>;
  /** The person at the desktop answers what a waiting turn asks, in the app: the turn ends. */
  answerInApp(sessionId: string, text: string): void;
  /** A reconcile now (resume from sleep). */
  wake(): void;
  stop(): Promise<void>;
}

const DEFAULT_SETS = [
  ["model_attention_v1", "remote_session_v1", "remote_session_control_v1"],
  ["model_attention_v1", "remote_session_v1"],
  ["model_attention_v1"],
];

export async function startOpenworkDesktopDouble(options: OpenworkDesktopDoubleOptions): Promise<OpenworkDesktopDouble> {
  const requests: string[] = [];
  const sessions = new Map<string, LocalSession>();
  const stopped = new AbortController();
  const state = { token: "", capabilities: [] as string[], retired: false, lastObserved: 0, nextId: 1 };
  const json = async (method: string, path: string, body?: unknown, auth = `Bearer ${state.token}`): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${options.baseUrl}${path}`, {
      method,
      signal: stopped.signal,
      headers: { authorization: auth, "content-type": "application/json", accept: "application/json", "x-openwork-org-id": "org" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    requests.push(`${method} ${path} -> ${response.status}`);
    // Any 401/403 on a runner route retires the credential: the generation stops.
    if ((response.status === 401 || response.status === 403) && auth !== `Bearer ${options.memberToken}`) state.retired = true;
    return { status: response.status, body: await response.json().catch(() => null) };
  };

  // D4-bridge: mint, stepping down only on 400.
  for (const capabilities of options.capabilitySets ?? DEFAULT_SETS) {
    const minted = await json("POST", "/v1/automation-runners/token", {
      runnerId: options.runnerId, protocolVersion: 1, supportedExecutionTargets: ["desktop"], capabilities, appVersion: "0.19.0", platform: "darwin", concurrency: 1,
    }, `Bearer ${options.memberToken}`);
    if (minted.status === 200) {
      state.token = minted.body.token;
      state.capabilities = capabilities;
      break;
    }
    if (minted.status !== 400) throw new Error(`mint answered ${minted.status}`);
  }
  if (!state.token) throw new Error("no capability set was accepted");
  const control = state.capabilities.includes("remote_session_control_v1");
  const observedAt = () => (state.lastObserved = Math.max(Date.now(), state.lastObserved + 1));
  const newId = (prefix: string) => `${prefix}_${String(state.nextId++).padStart(8, "0")}`;

  // The local engine: a prompt is answered `echo: <prompt>` after replyDelayMs.
  const prompt = (session: LocalSession, text: string, messageId: string | null) => {
    if (messageId && session.messages.some((m) => m.id === messageId)) return true;
    session.messages.push({ id: messageId ?? newId("msg"), role: "user", text, createdAt: Date.now() });
    // ASKQ: the turn waits on a question only the person at the desktop answers (`answerInApp`).
    if (text.includes("ASKQ")) {
      Object.assign(session, { status: "waiting", waitingFor: "question" });
      return false;
    }
    session.status = "running";
    session.timer = setTimeout(() => {
      session.messages.push({ id: newId("msg"), role: "assistant", text: `echo: ${text}`, createdAt: Date.now() });
      session.status = "idle";
      session.timer = null;
    }, text.includes("SLOW") ? 30_000 : (options.replyDelayMs ?? 100));
    return false;
  };

  // Progress: a report on every change of the observation, and at least every reportEveryMs.
  const watch = async (session: LocalSession) => {
    let last = "";
    let sentAt = 0;
    while (!stopped.signal.aborted && !state.retired) {
      const final = session.messages.findLast((m) => m.role === "assistant");
      const observation = JSON.stringify([session.status, session.messages.length]);
      if (observation !== last || Date.now() - sentAt >= (options.reportEveryMs ?? 60_000)) {
        const report = await json("POST", `/v1/remote-session-commands/${session.commandId}/session`, {
          status: session.status, waitingFor: session.waitingFor, engine: "v2", model: null,
          ...(session.status === "idle" && final ? { finalText: final.text } : {}),
          messageCount: session.messages.length, observedAt: observedAt(),
        }).catch(() => null);
        if (report && (report.status === 404 || report.status === 409)) return;
        last = observation;
        sentAt = Date.now();
      }
      await abortableSleep(50, stopped.signal);
    }
  };

  const claimCommand = async (commandId: string) => {
    const claim = await json("POST", `/v1/remote-session-commands/${commandId}/claim`, {});
    if (claim.status !== 200) return claim.status === 409 ? "repoll" : "stop";
    const assignment = claim.body.assignment;
    options.onCommand?.(commandId);
    const session: LocalSession = { id: newId("ses"), workspaceId: assignment.workspaceId ?? "ws_double", messages: [], status: "idle", waitingFor: null, timer: null, commandId };
    sessions.set(session.id, session);
    if (assignment.prompt) prompt(session, assignment.prompt, null);
    await json("POST", `/v1/remote-session-commands/${commandId}/complete`, { status: "delivered", sessionId: session.id, workspaceId: session.workspaceId, resultSummary: "Remote session created" });
    void watch(session);
    return "done";
  };

  const execute = (assignment: any): { status: "done"; outcome: unknown } | { status: "failed"; error: { code: string; message: string } } => {
    const session = sessions.get(assignment.sessionId);
    if (!session) return { status: "failed", error: { code: "unknown_session", message: "no such local session" } };
    if (assignment.action === "read") {
      const { from, cursor, limit } = assignment.input;
      const after = cursor ? session.messages.findIndex((m) => m.id === cursor) + 1 : 0;
      const page = from === "end" && !cursor ? session.messages.slice(-limit) : session.messages.slice(after, after + limit);
      return {
        status: "done",
        outcome: {
          action: "read",
          result: {
            historyScope: "full", title: null, status: session.status, waitingFor: session.waitingFor, lastError: null, messageCount: session.messages.length, from,
            messages: page.map((m) => ({ id: m.id, role: m.role, createdAt: m.createdAt, text: m.text, truncated: false, toolCalls: [], error: null })),
            nextCursor: page.at(-1)?.id ?? null,
          },
        },
      };
    }
    if (assignment.action === "send") {
      const alreadyPresent = prompt(session, assignment.input.prompt, assignment.input.messageId);
      return { status: "done", outcome: { action: "send", result: { messageId: assignment.input.messageId, alreadyPresent } } };
    }
    const running = session.status === "running";
    if (session.timer) clearTimeout(session.timer);
    session.timer = null;
    session.status = "idle";
    return { status: "done", outcome: { action: "stop", result: { stopped: running, reason: null } } };
  };

  const drain = async (ids: string[]) => {
    for (const requestId of ids) {
      const claim = await json("POST", `/v1/remote-session-requests/${requestId}/claim`, {});
      if (claim.status !== 200) continue;
      await json("POST", `/v1/remote-session-requests/${requestId}/complete`, execute(claim.body.assignment));
    }
  };

  const reconcile = async () => {
    for (;;) {
      const work = await json("GET", "/v1/automation-runner/work");
      if (work.status !== 200) return;
      const items: any[] = work.body.items;
      const requestIds = items.filter((i) => i.kind === "remote_session_request").map((i) => i.requestId);
      if (control && requestIds.length > 0) await drain(requestIds);
      const create = items.find((i) => i.kind === "remote_session_create");
      if (!create || (await claimCommand(create.commandId)) !== "repoll") return;
    }
  };

  let inFlight: Promise<void> | null = null;
  const reconcileOnce = () => (inFlight ??= reconcile().catch(() => {}).finally(() => (inFlight = null)));
  const loops = Promise.all([
    (async () => {
      while (!stopped.signal.aborted && !state.retired) {
        await reconcileOnce();
        await abortableSleep(options.pollMs ?? 60_000, stopped.signal);
      }
    })(),
    // Requests are drained every drainMs while a session is active.
    (async () => {
      while (!stopped.signal.aborted && !state.retired && control) {
        if (sessions.size > 0) {
          const pending = await json("GET", "/v1/remote-session-requests/pending").catch(() => null);
          if (pending?.status === 200) await drain(pending.body.items.map((i: { requestId: string }) => i.requestId)).catch(() => {});
        }
        await abortableSleep(options.drainMs ?? 2_000, stopped.signal);
      }
    })(),
  ]);

  return {
    requests,
    get capabilities() {
      return state.capabilities;
    },
    get retired() {
      return state.retired;
    },
    sessions,
    answerInApp: (sessionId, text) => {
      const session = sessions.get(sessionId);
      if (session?.status !== "waiting") return;
      session.messages.push({ id: newId("msg"), role: "assistant", text: `echo: answered ${text}`, createdAt: Date.now() });
      Object.assign(session, { status: "idle", waitingFor: null });
    },
    wake: () => void reconcileOnce(),
    stop: async () => {
      stopped.abort();
      for (const session of sessions.values()) if (session.timer) clearTimeout(session.timer);
      await loops.catch(() => {});
    },
  };
}
