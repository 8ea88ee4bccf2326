import type { LocalEngine } from "./local-engine.js";

interface MessageReply {
  info: { id: string; error?: { name: string; data?: { message?: string } } };
  parts: { type: string; text?: string }[];
}

/**
 * An engine over a local opencode server's HTTP API (what the desktop app runs): sessions are
 * real, visible opencode sessions. A prompt runs as one synchronous message call; stop aborts
 * the session.
 */
export function createOpencodeEngine(options: { url: string; directory?: string; fetch?: typeof fetch }): LocalEngine {
  const call = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  const headers = { "content-type": "application/json", ...(options.directory ? { "x-opencode-directory": options.directory } : {}) };
  const post = async <T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> => {
    const response = await call(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
    if (!response.ok) throw new Error(`opencode answered ${response.status} to POST ${path}`);
    return (await response.json()) as T;
  };
  return {
    createSession: async ({ title }) => (await post<{ id: string }>("/session", { title })).id,
    prompt: async ({ sessionId, text, signal, onText }) => {
      const abort = () => void post(`/session/${encodeURIComponent(sessionId)}/abort`, {}).catch(() => {});
      signal.addEventListener("abort", abort, { once: true });
      try {
        const reply = await post<MessageReply>(`/session/${encodeURIComponent(sessionId)}/message`, { parts: [{ type: "text", text }] });
        const answer = reply.parts.filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
        if (answer) onText(answer);
        if (reply.info.error && !signal.aborted) throw new Error(`${reply.info.error.name}: ${reply.info.error.data?.message ?? ""}`.slice(0, 500));
        return { messageId: reply.info.id, text: answer };
      } finally {
        signal.removeEventListener("abort", abort);
      }
    },
  };
}
