import { Hono } from "hono";
import { z } from "zod";

/** Calls the engine (opencode's own routes) behind the workspace: `GET /session`, … */
export type EngineCall = (method: string, path: string, body?: unknown) => Promise<Response>;

const CreateBody = z.strictObject({
  title: z.string().max(120).optional(),
  prompt: z.string().max(100_000).optional(),
  providerId: z.string().max(200).optional(),
  modelId: z.string().max(200).optional(),
  variant: z.string().max(200).optional(),
});
const Limit = z.coerce.number().int().min(1).max(1_000).optional();

/**
 * openwork-server's own session routes under `/workspace/:id/sessions` (what OpenWork Web reads:
 * a session created through the opencode mount appears here too), over the engine's routes:
 * list, create (then prompt), one session, its messages, a snapshot, delete and abort. An
 * unknown session is 404 `session_not_found` with the engine's answer in `details`.
 */
export function nativeSessionRoutes(engine: EngineCall) {
  const routes = new Hono();
  const relay = async (method: string, path: string, body?: unknown) => {
    const response = await engine(method, path, body);
    const answer: unknown = await response.json().catch(() => null);
    if (response.status === 404) {
      return {
        failed: Response.json({ code: "session_not_found", message: "Session not found", details: { status: 404, body: answer, path } }, { status: 404 }),
      };
    }
    if (!response.ok)
      return {
        failed: Response.json(
          { code: "opencode_error", message: `the engine answered ${response.status}`, details: { status: response.status, body: answer, path } },
          { status: 502 },
        ),
      };
    return { answer };
  };
  const messagesPath = (sid: string, limit: number | undefined) => `/session/${encodeURIComponent(sid)}/message${limit ? `?limit=${limit}` : ""}`;

  routes.get("/", async () => {
    const listed = await relay("GET", "/session");
    return listed.failed ?? Response.json({ items: listed.answer });
  });
  routes.post("/", async (c) => {
    const body = CreateBody.safeParse(await c.req.json().catch(() => ({})));
    if (!body.success)
      return c.json(
        { code: "invalid_request", message: "Invalid request body", details: body.error.issues.map((i) => ({ path: i.path, message: i.message })) },
        400,
      );
    const created = await relay("POST", "/session", body.data.title ? { title: body.data.title } : {});
    if (created.failed) return created.failed;
    const session = created.answer as { id: string };
    const { prompt, providerId, modelId, variant } = body.data;
    if (prompt) {
      const model = providerId && modelId ? { model: { providerID: providerId, modelID: modelId } } : {};
      const sent = await engine("POST", `/session/${encodeURIComponent(session.id)}/prompt_async`, {
        parts: [{ type: "text", text: prompt }],
        ...model,
        ...(variant ? { variant } : {}),
      });
      if (!sent.ok) return c.json({ code: "opencode_error", message: `the engine answered ${sent.status}` }, 502);
    }
    return c.json({ item: session, started: Boolean(prompt) }, 201);
  });
  routes.get("/:sid", async (c) => {
    const found = await relay("GET", `/session/${encodeURIComponent(c.req.param("sid"))}`);
    return found.failed ?? c.json({ item: found.answer });
  });
  routes.delete("/:sid", async (c) => {
    const deleted = await relay("DELETE", `/session/${encodeURIComponent(c.req.param("sid"))}`);
    return deleted.failed ?? c.json({ ok: true });
  });
  routes.get("/:sid/messages", async (c) => {
    const limit = Limit.safeParse(c.req.query("limit"));
    if (!limit.success) return c.json({ code: "invalid_request", message: "limit must be an integer from 1 to 1000" }, 400);
    const listed = await relay("GET", messagesPath(c.req.param("sid"), limit.data));
    return listed.failed ?? c.json({ items: listed.answer });
  });
  routes.get("/:sid/snapshot", async (c) => {
    const sid = c.req.param("sid");
    const limit = Limit.safeParse(c.req.query("limit"));
    if (!limit.success) return c.json({ code: "invalid_request", message: "limit must be an integer from 1 to 1000" }, 400);
    const session = await relay("GET", `/session/${encodeURIComponent(sid)}`);
    if (session.failed) return session.failed;
    const [messages, todos, status] = await Promise.all([
      relay("GET", messagesPath(sid, limit.data)),
      relay("GET", `/session/${encodeURIComponent(sid)}/todo`),
      relay("GET", "/session/status"),
    ]);
    const failed = messages.failed ?? todos.failed ?? status.failed;
    if (failed) return failed;
    // The engine lists only sessions that are not idle.
    const statusOf = (status.answer as Record<string, unknown> | null)?.[sid] ?? { type: "idle" };
    return c.json({ item: { session: session.answer, messages: messages.answer, todos: todos.answer, status: statusOf } });
  });
  routes.post("/:sid/abort", async (c) => {
    const aborted = await relay("POST", `/session/${encodeURIComponent(c.req.param("sid"))}/abort`);
    return aborted.failed ?? c.json({ ok: true });
  });
  return routes;
}
