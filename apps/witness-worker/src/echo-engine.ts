import { newOpencodeMessageId } from "@openwork/cloud-target";
import { randomBytes } from "node:crypto";

interface Message {
  info: {
    id: string;
    sessionID: string;
    role: "user" | "assistant";
    parentID?: string;
    time: { created: number; completed?: number };
    finish?: string;
    error?: { name: string; data: { message: string } };
  };
  parts: { id: string; type: "text"; text: string }[];
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const notFound = (what: string) => json({ name: "NotFoundError", data: { message: `${what} not found` } }, 404);

/**
 * A tiny in-memory engine with the subset of opencode's routes the cloud target uses, for
 * `npm start` without an opencode binary: each prompt is answered `echo: <prompt>` after a short
 * pause (prompts containing SLOW take 5 s, for trying stop). Not a model, not opencode.
 */
export function createEchoEngine(options: { replyDelayMs?: number } = {}) {
  const sessions = new Map<string, { id: string; title: string; time: { created: number; updated: number }; messages: Message[]; busy: ReturnType<typeof setTimeout> | null }>();
  const delay = options.replyDelayMs ?? 150;

  const reply = (session: NonNullable<ReturnType<typeof sessions.get>>, user: Message) => {
    const text = user.parts.map((p) => p.text).join("");
    const assistant: Message = {
      info: { id: newOpencodeMessageId(), sessionID: session.id, role: "assistant", parentID: user.info.id, time: { created: Date.now() } },
      parts: [],
    };
    session.messages.push(assistant);
    session.busy = setTimeout(() => {
      assistant.parts.push({ id: `prt_${randomBytes(6).toString("hex")}`, type: "text", text: `echo: ${text}` });
      assistant.info.time.completed = Date.now();
      assistant.info.finish = "stop";
      session.busy = null;
    }, text.includes("SLOW") ? 5_000 : delay);
  };

  return async (request: Request, path: string): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (method === "GET" && path === "/session/status") {
      return json(Object.fromEntries([...sessions.values()].filter((s) => s.busy).map((s) => [s.id, { type: "busy" }])));
    }
    if (method === "POST" && path === "/session") {
      const body = (await request.json().catch(() => ({}))) as { title?: string };
      const id = `ses_${randomBytes(12).toString("hex")}`;
      const session = { id, title: body.title ?? "New session", time: { created: Date.now(), updated: Date.now() }, messages: [], busy: null };
      sessions.set(id, session);
      return json({ id, title: session.title, time: session.time });
    }
    const match = /^\/session\/([^/]+)(?:\/(message|prompt_async|abort)(?:\/([^/]+))?)?$/.exec(path);
    const session = match ? sessions.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match) return notFound("Route");
    const [, , action, messageId] = match;
    // As opencode: aborting a session it does not know answers true; anything else is "not found".
    if (!session && action === "abort" && method === "POST") return json(true);
    if (!session) return json({ name: "NotFoundError", data: { message: `Session not found: ${match[1]}` } }, 404);
    if (!action && method === "GET") return json({ id: session.id, title: session.title, time: session.time });
    if (!action && method === "DELETE") {
      sessions.delete(session.id);
      return json(true);
    }
    if (action === "message" && method === "GET") {
      if (!messageId) return json(session.messages);
      const found = session.messages.find((m) => m.info.id === messageId);
      return found ? json(found) : notFound(`Message ${messageId}`);
    }
    if (action === "prompt_async" && method === "POST") {
      const body = (await request.json().catch(() => ({}))) as { parts?: { type: string; text?: string }[]; messageID?: string };
      if (!Array.isArray(body.parts)) return json({ name: "BadRequest", data: { message: "Missing key parts" } }, 400);
      const text = body.parts.filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
      const user: Message = {
        info: { id: body.messageID ?? newOpencodeMessageId(), sessionID: session.id, role: "user", time: { created: Date.now() } },
        parts: [{ id: `prt_${randomBytes(6).toString("hex")}`, type: "text", text }],
      };
      session.messages.push(user);
      reply(session, user);
      return new Response(null, { status: 204 });
    }
    if (action === "abort" && method === "POST") {
      if (session.busy) {
        clearTimeout(session.busy);
        session.busy = null;
        const running = session.messages.findLast((m) => m.info.role === "assistant" && !m.info.time.completed);
        if (running) {
          running.info.time.completed = Date.now();
          running.info.error = { name: "MessageAbortedError", data: { message: "Aborted" } };
        }
      }
      return json(true);
    }
    return notFound("Route");
  };
}
