import { abortableSleep } from "./abortable-sleep.js";
import { createLocalEngine, type LocalSession } from "./openwork-local-engine.js";
import { openworkBridge } from "./openwork-desktop-bridge.js";

// A double of OpenWork's remote-session desktop runner (D4) and its bridge, written from the wire
// spec, behaving as the released code does: the bridge mints with the member's session (stepping
// its capabilities down on 400), again every `refreshMs` and at once when the runner retires a
// rejected credential; the runner uses a token only when its audience is its base URL
// (`<origin>/api/den`), polls work every `pollMs` (plus `wake()`, with backoff on 5xx), claims a
// command, creates a visible local session and watches its first turn before it reports
// `delivered` or `failed`, reports progress (`error` "Aborted" after a stop included) on OpenWork's
// watch phases, drains requests from `/pending` only while active, and sends OpenWork's inventory.
// Every timer is an option, so tests run the real phases in milliseconds. It records every request.

/** OpenWork's phases in milliseconds instead of seconds and minutes: a test's turn ends within a second. */
export const QUICK_OPENWORK_PHASES = {
  pollMs: 100,
  drainMs: 50,
  watchMs: 50,
  firstTurnMs: 2_000,
  firstTurnPollMs: 20,
  idleGraceMs: 300,
  inventoryMs: 200,
  backoffMs: 20,
  replyDelayMs: 100,
} satisfies Partial<OpenworkDesktopDoubleOptions>;

export interface OpenworkDesktopDoubleOptions {
  /** The desktop's base URL: an unmodified desktop always uses `<origin>/api/den`. */
  baseUrl: string;
  /** A member session token for the mint. */
  memberToken: string;
  runnerId: string;
  /** Capability sets tried in order, stepping down on 400 (D4-bridge's). */
  capabilitySets?: string[][];
  /** The bridge mints again this often (5 min in the field). */
  refreshMs?: number;
  /** The work poll (60 s in the field). */
  pollMs?: number;
  /** How often pending requests are drained while active (2 s in the field). */
  drainMs?: number;
  /** Remote activity keeps the request drain going this long (30 min in the field). */
  activityWindowMs?: number;
  /** Inventory goes out at most this often, only when changed (2 min in the field). */
  inventoryMs?: number;
  /** The progress watch polls every `watchMs` for `watchSlowAfterMs`, then every `watchSlowMs` (3 s, 5 min, 15 s in the field). */
  watchMs?: number;
  watchSlowAfterMs?: number;
  watchSlowMs?: number;
  /** Progress reports go out on change, and at least this often (60 s in the field). */
  reportEveryMs?: number;
  /** The first turn is watched this long, every `firstTurnPollMs`, idle without output for `idleGraceMs` is `no_reply` (20 s, 500 ms, 5 s in the field). */
  firstTurnMs?: number;
  firstTurnPollMs?: number;
  idleGraceMs?: number;
  /** Backoff after a failed work poll: `backoffMs`·2ⁿ up to `backoffCapMs` (500 ms and 30 s in the field). */
  backoffMs?: number;
  backoffCapMs?: number;
  /** How long the local engine takes to answer a prompt; prompts with SLOW take `slowReplyMs` (30 s). */
  replyDelayMs?: number;
  slowReplyMs?: number;
  /** Told of each command it claimed (a benchmark's clock). */
  onCommand?(commandId: string): void;
  /** The network it talks through (a test's can fail requests). Default the global `fetch`. */
  fetch?: typeof fetch;
}

export interface OpenworkDesktopDouble {
  /** Every request sent, as `METHOD path -> status` (`-> network` for no answer), paths below the base URL. */
  readonly requests: string[];
  /** What the desktop logged besides requests (a token it would not use, a mint that failed). */
  readonly notes: string[];
  /** The capabilities its current token was minted with (after any step-down). */
  readonly capabilities: string[];
  /** Whether it holds a token it uses. */
  readonly configured: boolean;
  /** Whether it ever retired a credential (a 401/403 on a runner route). */
  readonly retired: boolean;
  /** Its local sessions (what a person sees in the desktop app). */
  readonly sessions: ReadonlyMap<string, LocalSession>;
  /** The person at the desktop answers what a waiting turn asks, in the app: the turn ends. */
  answerInApp(sessionId: string, text: string): void;
  /** A reconcile and an inventory look now (resume from sleep). */
  wake(): void;
  stop(): Promise<void>;
}

type Reply = { status: number; body: any };
type Completion = { status: "done"; outcome: unknown } | { status: "failed"; error: { code: string; message: string } };

const jitter = () => 0.5 + Math.random();

export async function startOpenworkDesktopDouble(options: OpenworkDesktopDoubleOptions): Promise<OpenworkDesktopDouble> {
  const t = {
    pollMs: 60_000,
    drainMs: 2_000,
    activityWindowMs: 30 * 60_000,
    inventoryMs: 2 * 60_000,
    watchMs: 3_000,
    watchSlowAfterMs: 5 * 60_000,
    watchSlowMs: 15_000,
    reportEveryMs: 60_000,
    firstTurnMs: 20_000,
    firstTurnPollMs: 500,
    idleGraceMs: 5_000,
    backoffMs: 500,
    backoffCapMs: 30_000,
    ...definedOf(options),
  };
  const stopped = new AbortController();
  const sleep = (ms: number, signal: AbortSignal = stopped.signal) => abortableSleep(ms, signal);
  const engine = createLocalEngine({ replyDelayMs: options.replyDelayMs ?? 100, slowReplyMs: options.slowReplyMs ?? 30_000 });
  const requests: string[] = [];
  const notes: string[] = [];
  // A session's watch, by local session id: `turn` grows when a follow-up starts a new turn.
  const watches = new Map<string, { turn: number }>();
  let lastActivity = Number.NEGATIVE_INFINITY;
  let wakeUp = new AbortController();
  // Wakes every loop sleeping on the current signal; later sleeps get a fresh one.
  const wake = () => {
    const woken = wakeUp;
    wakeUp = new AbortController();
    woken.abort();
  };

  const send = async (method: string, path: string, body: unknown, auth: string): Promise<Reply> => {
    try {
      const response = await (options.fetch ?? fetch)(`${options.baseUrl}${path}`, {
        method,
        signal: stopped.signal,
        headers: { authorization: auth, "content-type": "application/json", accept: "application/json", "x-openwork-org-id": "org" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      requests.push(`${method} ${path} -> ${response.status}`);
      return { status: response.status, body: await response.json().catch(() => null) };
    } catch {
      if (!stopped.signal.aborted) requests.push(`${method} ${path} -> network`);
      return { status: 0, body: null };
    }
  };
  const bridge = openworkBridge({ ...options, refreshMs: options.refreshMs ?? 5 * 60_000, send, notes, signal: stopped.signal, onConfigured: wake });
  // A runner request on the current credential; a 401/403 retires it (the bridge mints again).
  const runner = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const token = bridge.token;
    if (!token) return { status: 0, body: null };
    const reply = await send(method, path, body, `Bearer ${token}`);
    if (reply.status === 401 || reply.status === 403) bridge.retire(token);
    return reply;
  };
  // A completion is retried once after a 5xx or no answer.
  const complete = async (path: string, body: unknown) => {
    const first = await runner("POST", path, body);
    return first.status === 0 || first.status >= 500 ? runner("POST", path, body) : first;
  };
  const control = () => bridge.capabilities.includes("remote_session_control_v1");

  // --- progress: OpenWork's watch of a delivered, started session ---------------------------
  const observe = (session: LocalSession, silentIdle: number) => {
    const turnStart = session.messages.findLastIndex((m) => m.role === "user");
    const answer = session.messages.slice(turnStart + 1).findLast((m) => m.role === "assistant" && m.text);
    // Idle three polls in a row without an answer: the turn produced nothing.
    if (session.status === "idle" && !answer && silentIdle >= 3)
      return { status: "error", error: { code: "no_reply", message: `session ${session.id} went idle without a reply` } };
    return {
      status: session.status,
      waitingFor: session.status === "waiting" ? session.waitingFor : null,
      ...(session.status === "idle" && answer ? { finalText: answer.text } : {}),
      ...(session.status === "error" ? { error: session.error } : {}),
    };
  };
  const watch = async (session: LocalSession) => {
    const existing = watches.get(session.id);
    if (existing) return void existing.turn++;
    const state = { turn: 0 };
    watches.set(session.id, state);
    const generation = bridge.generation;
    const began = Date.now();
    let [turn, started, last, sentAt, silentIdle, lastObservedAt] = [-1, began, "", 0, 0, 0];
    try {
      // A watch lives in memory for at most 6 hours, and only under the credential it began with.
      while (!stopped.signal.aborted && bridge.generation === generation && Date.now() - began < 6 * 3_600_000) {
        if (state.turn !== turn) [turn, started, last, silentIdle] = [state.turn, Date.now(), "", 0];
        const observation = observe(session, silentIdle);
        silentIdle = session.status === "idle" ? silentIdle + 1 : 0;
        const text = JSON.stringify(observation);
        if (text !== last || Date.now() - sentAt >= t.reportEveryMs) {
          lastObservedAt = Math.max(Date.now(), lastObservedAt + 1);
          const report = await runner("POST", `/v1/remote-session-commands/${session.commandId}/session`, {
            ...observation,
            engine: "v2",
            messageCount: session.messages.length,
            observedAt: lastObservedAt,
          });
          if (report.status === 404 || report.status === 409) return;
          // Anything else but a 200 leaves `last` as it was: the same report goes out on the next poll.
          if (report.status === 200) {
            [last, sentAt] = [text, Date.now()];
            if ((observation.status === "idle" || observation.status === "error") && state.turn === turn) return;
          }
        }
        await sleep(Date.now() - started < t.watchSlowAfterMs ? t.watchMs : t.watchSlowMs);
      }
    } finally {
      watches.delete(session.id);
    }
  };

  // --- commands: the visible local session and its first turn ----------------------------------
  const firstTurn = async (session: LocalSession): Promise<{ code: string; message: string } | null> => {
    const deadline = Date.now() + t.firstTurnMs;
    let idleSince: number | null = null;
    for (;;) {
      const where = `local session ${session.id} in workspace ${session.workspaceId}`;
      if (session.status === "error")
        return { code: session.error?.code ?? "execution_failed", message: `${where}: ${session.error?.message ?? "the turn failed"}` };
      const answered = session.messages.some((m) => m.role === "assistant" && m.text);
      if (answered || session.status === "waiting" || Date.now() >= deadline) return null;
      idleSince = session.status === "idle" ? (idleSince ?? Date.now()) : null;
      if (idleSince !== null && Date.now() - idleSince >= t.idleGraceMs) return { code: "no_reply", message: `${where} went idle without a reply` };
      await sleep(t.firstTurnPollMs);
    }
  };
  const claimCommand = async (commandId: string) => {
    const claim = await runner("POST", `/v1/remote-session-commands/${commandId}/claim`, {});
    if (claim.status !== 200) return claim.status === 409 ? "repoll" : "stop";
    lastActivity = Date.now();
    const assignment = claim.body.assignment;
    options.onCommand?.(commandId);
    const session = engine.create(commandId, assignment.workspaceId ?? "ws_double");
    if (assignment.prompt) engine.prompt(session, assignment.prompt, null);
    const failed = assignment.prompt ? await firstTurn(session) : null;
    const receipt = failed
      ? { status: "failed", error: failed }
      : { status: "delivered", sessionId: session.id, workspaceId: session.workspaceId, resultSummary: "Remote session created" };
    const done = await complete(`/v1/remote-session-commands/${commandId}/complete`, receipt);
    if (done.status === 200 && !failed && assignment.prompt) void watch(session);
    return "done";
  };

  // --- requests: read, send, stop of a delivered session ------------------------------------------
  const execute = (assignment: any): Completion => {
    const session = engine.sessions.get(assignment.sessionId);
    if (!session) return { status: "failed", error: { code: "unknown_session", message: "no such local session" } };
    if (assignment.action === "read") {
      const page = engine.page(session, assignment.input);
      if (!page) return { status: "failed", error: { code: "invalid_cursor", message: "the cursor names no message of this session" } };
      const messages = page.messages.map((m) => ({
        id: m.id,
        role: m.role,
        createdAt: m.createdAt,
        text: m.text,
        truncated: false,
        toolCalls: [],
        error: m.error,
      }));
      const result = {
        historyScope: "full",
        title: null,
        status: session.status,
        waitingFor: session.waitingFor,
        lastError: session.error,
        messageCount: session.messages.length,
        from: assignment.input.from,
        messages,
        nextCursor: page.nextCursor,
      };
      return { status: "done", outcome: { action: "read", result } };
    }
    if (assignment.action === "send") {
      const alreadyPresent = engine.prompt(session, assignment.input.prompt, assignment.input.messageId);
      const messageId = session.messages.findLast((m) => m.role === "user")!.id;
      return { status: "done", outcome: { action: "send", result: { messageId, alreadyPresent } } };
    }
    // A stop guarded by a message id stops only the turn that message started.
    const current = session.messages.findLast((m) => m.role === "user");
    if (assignment.input.messageId && current?.id !== assignment.input.messageId)
      return { status: "done", outcome: { action: "stop", result: { stopped: false, reason: "different_turn" } } };
    return { status: "done", outcome: { action: "stop", result: { stopped: engine.abort(session), reason: null } } };
  };
  const drain = async (ids: string[]) => {
    for (const requestId of ids) {
      const claim = await runner("POST", `/v1/remote-session-requests/${requestId}/claim`, {});
      if (claim.status !== 200) continue;
      lastActivity = Date.now();
      const assignment = claim.body.assignment;
      const path = `/v1/remote-session-requests/${requestId}/complete`;
      const outcome: Completion =
        assignment.expiresAt <= Date.now()
          ? { status: "failed", error: { code: "request_expired", message: "the request expired before it ran" } }
          : execute(assignment);
      const done = await complete(path, outcome);
      if (done.status === 400 && outcome.status === "done")
        await complete(path, { status: "failed", error: { code: "result_rejected", message: "the gateway refused the result" } });
      const session = engine.sessions.get(assignment.sessionId);
      const newTurn =
        assignment.action === "send" && outcome.status === "done" && !(outcome.outcome as { result: { alreadyPresent: boolean } }).result.alreadyPresent;
      if (done.status === 200 && newTurn && session) void watch(session);
    }
  };

  // --- the main loop: reconcile, then the poll; backoff after a failed poll -----------------------
  const reconcile = async () => {
    for (;;) {
      const work = await runner("GET", "/v1/automation-runner/work");
      if (work.status === 0 || work.status >= 500) throw new Error(`work poll answered ${work.status}`);
      if (work.status !== 200) return;
      const items: any[] = work.body.items;
      const requestIds = items.filter((i) => i.kind === "remote_session_request").map((i) => i.requestId);
      if (control() && requestIds.length > 0) void drain(requestIds);
      const create = items.find((i) => i.kind === "remote_session_create");
      if (!create || (await claimCommand(create.commandId)) !== "repoll") return;
    }
  };
  let inFlight: Promise<void> | null = null;
  const reconcileOnce = () => (inFlight ??= reconcile().finally(() => (inFlight = null)));
  const untilWoken = (ms: number) => sleep(ms, AbortSignal.any([stopped.signal, wakeUp.signal]));
  const active = () => watches.size > 0 || Date.now() - lastActivity < t.activityWindowMs;
  let lastInventory = "";
  const inventory = async () => {
    if (!bridge.token || bridge.inventoryRefused) return;
    const body = inventoryOf(engine.sessions);
    if (JSON.stringify(body) === lastInventory) return;
    const put = await runner("PUT", "/v1/automation-runner/inventory", body);
    if (put.status === 200) lastInventory = JSON.stringify(body);
    if (put.status === 404) bridge.refuseInventory();
  };

  await bridge.mintNow();
  const loops = Promise.all([
    bridge.refreshLoop(),
    (async () => {
      for (let failures = 0; !stopped.signal.aborted; ) {
        if (!bridge.token) {
          await untilWoken(t.pollMs);
          continue;
        }
        try {
          await reconcileOnce();
          failures = 0;
        } catch {
          failures++;
          await sleep(Math.min(t.backoffCapMs, t.backoffMs * 2 ** (failures - 1)) * jitter());
          continue;
        }
        await untilWoken(t.pollMs);
      }
    })(),
    (async () => {
      while (!stopped.signal.aborted) {
        if (bridge.token && control() && active()) {
          const pending = await runner("GET", "/v1/remote-session-requests/pending");
          if (pending.status === 200) await drain(pending.body.items.map((i: { requestId: string }) => i.requestId));
        }
        await sleep(t.drainMs);
      }
    })(),
    (async () => {
      while (!stopped.signal.aborted) {
        await inventory().catch(() => {});
        await untilWoken(t.inventoryMs);
      }
    })(),
  ]);

  return {
    requests,
    notes,
    get capabilities() {
      return bridge.capabilities;
    },
    get configured() {
      return bridge.token !== null;
    },
    get retired() {
      return bridge.retirements > 0;
    },
    sessions: engine.sessions,
    answerInApp: (sessionId, text) => engine.answerInApp(sessionId, text),
    wake,
    stop: async () => {
      stopped.abort();
      engine.close();
      await loops.catch(() => {});
    },
  };
}

/** OpenWork's inventory body: the computer, and its workspaces with their engine and models. */
function inventoryOf(sessions: ReadonlyMap<string, LocalSession>) {
  const workspaceIds = [...new Set(["ws_double", ...[...sessions.values()].map((s) => s.workspaceId)])];
  return {
    computer: { label: "Work Laptop", platform: "darwin", appVersion: "0.19.0" },
    workspaces: workspaceIds.map((workspaceId, i) => ({
      workspaceId,
      name: workspaceId,
      active: i === 0,
      engine: "v2",
      defaultModel: { providerId: "openai", modelId: "gpt-5", variant: null },
      models: [{ providerId: "openai", modelId: "gpt-5", name: "GPT-5" }],
    })),
  };
}

/** The options that were given (undefined ones do not override a default). */
function definedOf<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined && typeof value === "number")) as Partial<T>;
}
