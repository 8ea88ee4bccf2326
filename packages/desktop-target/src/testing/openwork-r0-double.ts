import { abortableSleep } from "./abortable-sleep.js";

// A double of OpenWork's released, automation-only desktop runner (R0), written from §3.1 of the
// wire spec: its connect loop, its backoff that resets on any HTTP answer, its reconcile. It runs
// no Automations (none are ever assigned here); it counts what it sends.

export interface R0Double {
  /** Every request sent, as `METHOD path -> status` (or `-> network` for no answer). */
  readonly requests: string[];
  stop(): Promise<void>;
}

const jitter = () => 0.5 + Math.random();

/** Starts the R0 connect loop against `baseUrl` with `token` (what R0-bridge configured). */
export function startR0Double(options: { baseUrl: string; token: string }): R0Double {
  const requests: string[] = [];
  const stopped = new AbortController();
  let backoff = 0;
  let lastEventId: string | undefined;
  const send = async (method: string, path: string, init: RequestInit = {}): Promise<Response | null> => {
    try {
      const response = await fetch(`${options.baseUrl}${path}`, {
        ...init,
        method,
        signal: stopped.signal,
        headers: { authorization: `Bearer ${options.token}`, accept: "application/json", ...(init.headers as Record<string, string>) },
      });
      requests.push(`${method} ${path} -> ${response.status}`);
      return response;
    } catch {
      if (!stopped.signal.aborted) requests.push(`${method} ${path} -> network`);
      return null;
    }
  };
  const sleep = (ms: number) => abortableSleep(ms, stopped.signal);
  // Reconcile: GET work, items[0] with a runId is claimed; anything else ends it. Errors are dropped.
  const reconcile = async () => {
    const response = await send("GET", "/v1/automation-runner/work");
    const body = response?.ok ? ((await response.json().catch(() => null)) as { items?: { runId?: string }[] } | null) : null;
    const first = body?.items?.[0];
    if (first?.runId) await send("POST", `/v1/automation-runs/${encodeURIComponent(first.runId)}/claim`, { body: "{}", headers: { "content-type": "application/json" } });
  };

  const loop = (async () => {
    while (!stopped.signal.aborted) {
      void reconcile();
      const response = await send("GET", "/v1/automation-runners/events", { headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) } });
      if (!response) {
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
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
          for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (.*)$/m.exec(frame)?.[1];
            const event = /^event: (.*)$/m.exec(frame)?.[1];
            if (id) lastEventId = id;
            if (event === "automation_work_available" || event === "automation_cancellation_available") void reconcile();
          }
        }
      } catch {
        // the stream broke
      }
      // A stream the server closed: one backoff step.
      await sleep(500 * jitter() * 0.5);
    }
  })();

  return {
    requests,
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}
