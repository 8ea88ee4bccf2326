import { followSse } from "@openwork/remote-session-core/wire";
import { abortableSleep } from "./abortable-sleep.js";
import { openworkBridge } from "./openwork-desktop-bridge.js";

// A double of OpenWork's released, automation-only desktop runner (R0) and its bridge: its connect
// loop, its backoff that resets on any HTTP answer, its reconcile; with a member token, the
// bridge mints (`model_attention_v1`) and mints again every `refreshMs` (5 min in the field), each
// new token starting a new connection. A run it claims it runs as R0 does: one event per request
// (`user`, `assistant`, `usage`, `terminal`), then the completion `succeeded`; it counts what it
// sends.

export interface R0Double {
  /** Every request sent, as `METHOD path -> status` (or `-> network` for no answer). */
  readonly requests: string[];
  /** The runs it completed, by id. */
  readonly completedRuns: string[];
  stop(): Promise<void>;
}

const jitter = () => 0.5 + Math.random();

export type R0DoubleOptions =
  /** Configured with `token` (what R0-bridge configured). */
  | { baseUrl: string; token: string }
  /** Or minting its own with the member's session, again every `refreshMs`. */
  | { baseUrl: string; memberToken: string; runnerId: string; refreshMs?: number };

/** Starts the R0 connect loop against `baseUrl`. */
export async function startR0Double(options: R0DoubleOptions): Promise<R0Double> {
  const requests: string[] = [];
  const completedRuns: string[] = [];
  const stopped = new AbortController();
  let backoff = 0;
  let lastEventId: string | undefined;
  // A new token ends the current connection: the loop connects again with it.
  let connection = new AbortController();
  const bridge =
    "memberToken" in options
      ? openworkBridge({
          ...options,
          capabilitySets: [["model_attention_v1"]],
          refreshMs: options.refreshMs ?? 5 * 60_000,
          notes: [],
          signal: stopped.signal,
          send: async (method, path, body, auth) => {
            const response = await send(method, path, { body: JSON.stringify(body), headers: { authorization: auth, "content-type": "application/json" } });
            return { status: response?.status ?? 0, body: await response?.json().catch(() => null) };
          },
          onConfigured: () => connection.abort(),
        })
      : null;
  const token = () => (bridge ? bridge.token : (options as { token: string }).token);
  const send = async (method: string, path: string, init: RequestInit = {}, signal = stopped.signal): Promise<Response | null> => {
    try {
      const response = await fetch(`${options.baseUrl}${path}`, {
        ...init,
        method,
        signal,
        headers: { authorization: `Bearer ${token()}`, accept: "application/json", ...(init.headers as Record<string, string>) },
      });
      requests.push(`${method} ${path} -> ${response.status}`);
      return response;
    } catch {
      if (!signal.aborted) requests.push(`${method} ${path} -> network`);
      return null;
    }
  };
  const sleep = (ms: number) => abortableSleep(ms, stopped.signal);
  const post = (path: string, body: unknown) => send("POST", path, { body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  // A claimed run: its events one per request, then its completion (R0's order).
  const execute = async (assignment: { runId: string; attempt: number; instructions: string }) => {
    const path = `/v1/automation-runs/${encodeURIComponent(assignment.runId)}`;
    const { attempt } = assignment;
    const summary = `R0 ran: ${assignment.instructions.slice(0, 40)}`;
    const events = [
      { type: "user", payload: { text: assignment.instructions, executionTarget: "desktop" } },
      { type: "assistant", payload: { text: summary, sessionId: "r0-local-session", workspaceId: "r0-workspace" } },
      { type: "usage", payload: { inputTokens: 12, outputTokens: 5, costMicros: null } },
      { type: "terminal", payload: { status: "succeeded", executionTarget: "desktop", sessionId: "r0-local-session" } },
    ];
    for (const [i, event] of events.entries()) {
      const posted = await post(`${path}/events`, { attempt, sequence: i + 1, ...event, createdAt: Date.now() });
      if (!posted?.ok) return;
    }
    const usage = { inputTokens: 12, outputTokens: 5, costMicros: null };
    const done = await post(`${path}/complete`, {
      attempt,
      status: "succeeded",
      sessionId: "r0-local-session",
      workspaceId: "r0-workspace",
      resultSummary: summary,
      usage,
      error: null,
    });
    if (done?.ok) completedRuns.push(assignment.runId);
  };
  // Reconcile: GET work, items[0] with a runId is claimed (and run); anything else ends it. Errors are dropped.
  const reconcile = async () => {
    const response = await send("GET", "/v1/automation-runner/work");
    const body = response?.ok ? ((await response.json().catch(() => null)) as { items?: { runId?: string }[] } | null) : null;
    const first = body?.items?.[0];
    if (!first?.runId) return;
    const claimed = await post(`/v1/automation-runs/${encodeURIComponent(first.runId)}/claim`, {});
    const answer = claimed?.ok
      ? ((await claimed.json().catch(() => null)) as { assignment?: { runId: string; attempt: number; instructions: string } | null } | null)
      : null;
    if (answer?.assignment) await execute(answer.assignment);
  };

  await bridge?.mintNow();
  const refreshing = bridge?.refreshLoop();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      if (!token()) {
        await sleep(500);
        continue;
      }
      void reconcile();
      connection = new AbortController();
      const response = await send(
        "GET",
        "/v1/automation-runners/events",
        { headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) } },
        AbortSignal.any([stopped.signal, connection.signal]),
      );
      if (!response) {
        // A new token ended the connection: connect again with it at once.
        if (connection.signal.aborted) continue;
        // Only network errors let the backoff grow.
        backoff = Math.min(30_000, backoff === 0 ? 500 : backoff * 2);
        await sleep(backoff * jitter());
        continue;
      }
      backoff = 0;
      if (!response.ok || !response.body) {
        await response.body?.cancel().catch(() => {});
        await sleep(500 * jitter());
        continue;
      }
      const body = response.body;
      await followSse({
        open: async () => body,
        onMessage: (message) => {
          if (message.id) lastEventId = message.id;
          if (message.event === "automation_work_available" || message.event === "automation_cancellation_available") void reconcile();
        },
        // No silence timer: the released R0 desktop has none, and waits on a silent stream until it ends.
        signal: AbortSignal.any([stopped.signal, connection.signal]),
      }).catch(() => {
        // the stream broke, or was ended by a new token or stop
      });
      // A stream the server closed: one backoff step.
      await sleep(500 * jitter() * 0.5);
    }
  })();

  return {
    requests,
    completedRuns,
    stop: async () => {
      stopped.abort();
      await Promise.all([loop, refreshing]);
    },
  };
}
