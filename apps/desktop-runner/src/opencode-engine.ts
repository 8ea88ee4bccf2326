import { createParser } from "eventsource-parser";
import type { LocalEngine } from "./local-engine.js";

interface MessageWithParts {
  info: { id: string; role: string; time?: { created?: number }; error?: { name: string; data?: { message?: string } } };
  parts: { type: string; text?: string }[];
}

interface EngineEvent {
  type: string;
  properties: { sessionID?: string; messageID?: string; field?: string; delta?: string; part?: { id?: string; type?: string; messageID?: string }; error?: { name?: string; data?: { message?: string } }; status?: { type?: string } };
}

/**
 * An engine over a local opencode server's HTTP API (what the desktop app runs): sessions are
 * real, visible opencode sessions. A prompt goes in with `prompt_async` while the runner follows
 * the engine's event stream, so the reply's text reaches the gateway as it is written
 * (`message.part.delta`), an error that ends the turn (`session.error`) fails it, and stop aborts
 * the engine's turn. The whole reply is read from the message list once the session is idle.
 */
export function createOpencodeEngine(options: { url: string; directory?: string; fetch?: typeof fetch }): LocalEngine {
  const call = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  const headers = { "content-type": "application/json", ...(options.directory ? { "x-opencode-directory": options.directory } : {}) };
  const request = async (method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> => {
    const response = await call(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal ? { signal } : {}) });
    if (!response.ok) throw new Error(`opencode answered ${response.status} to ${method} ${path}`);
    return response;
  };
  return {
    createSession: async ({ title }) => ((await (await request("POST", "/session", { title })).json()) as { id: string }).id,
    prompt: async ({ sessionId, messageId, text, signal, onText }) => {
      const session = `/session/${encodeURIComponent(sessionId)}`;
      const abort = () => void request("POST", `${session}/abort`, {}).catch(() => {});
      signal.addEventListener("abort", abort, { once: true });
      const stream = new AbortController();
      try {
        const turn = followTurn(await request("GET", "/event", undefined, stream.signal), sessionId, onText);
        await turn.connected;
        // opencode's message ids start with "msg"; the gateway's do, so a replayed prompt is recognised.
        await request("POST", `${session}/prompt_async`, { parts: [{ type: "text", text }], ...(messageId.startsWith("msg") ? { messageID: messageId } : {}) });
        const error = await turn.ended;
        const messages = (await (await request("GET", `${session}/message`)).json()) as MessageWithParts[];
        const reply = messages.findLast((m) => m.info.role === "assistant");
        const answer = (reply?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
        const failure = error ?? reply?.info.error;
        if (failure && !signal.aborted) throw new Error(`${failure.name}: ${failure.data?.message ?? ""}`.split("\n")[0]!.slice(0, 500));
        return { messageId: reply?.info.id ?? messageId, text: answer };
      } finally {
        stream.abort();
        signal.removeEventListener("abort", abort);
      }
    },
  };
}

/** Follows one session's turn on the engine's event stream: its text deltas, its error, its end. */
function followTurn(response: Response, sessionId: string, onText: (delta: string) => void) {
  let connected!: () => void;
  let ended!: (error: { name: string; data?: { message?: string } } | null) => void;
  const result = {
    connected: new Promise<void>((resolve) => (connected = resolve)),
    ended: new Promise<{ name: string; data?: { message?: string } } | null>((resolve) => (ended = resolve)),
  };
  const textParts = new Set<string>();
  let busy = false;
  let error: { name: string; data?: { message?: string } } | null = null;
  const parser = createParser({
    onEvent: (message) => {
      let event: EngineEvent;
      try {
        event = JSON.parse(message.data) as EngineEvent;
      } catch {
        return;
      }
      const p = event.properties ?? {};
      if (event.type === "server.connected") return connected();
      if (p.sessionID !== sessionId) return;
      if (event.type === "message.part.updated" && p.part?.type === "text" && p.part.id) textParts.add(p.part.id);
      else if (event.type === "message.part.delta" && p.field === "text" && typeof p.delta === "string" && textParts.has(String((p as { partID?: string }).partID))) onText(p.delta);
      else if (event.type === "session.error" && !error) error = { name: p.error?.name ?? "UnknownError", ...(p.error?.data ? { data: p.error.data } : {}) };
      else if (event.type === "session.status" && p.status?.type && p.status.type !== "idle") busy = true;
      else if (event.type === "session.idle" && (busy || error)) ended(error);
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed by us once the turn ended, or the engine went away
    }
    connected();
    ended(error ?? { name: "EngineStreamClosed", data: { message: "the engine's event stream closed before the turn ended" } });
  })();
  return result;
}
