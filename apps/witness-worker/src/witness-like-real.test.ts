import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

// Where the witness must behave as the real openwork-server + opencode do (the real stack's
// observed behaviour): the echo engine, without a database; the MCP entry and permission routes
// are checked on a real opencode too.
let witness: RunningWitness;
const headers = { authorization: "Bearer client-token-like-real", "content-type": "application/json" };
const mount = () => `${witness.url}/workspace/ws_witness/opencode`;
const get = async <T>(url: string): Promise<T> => (await (await fetch(url, { headers })).json()) as T;
const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers, body: JSON.stringify(body) });

beforeAll(async () => {
  witness = await startWitnessWorker({
    clientToken: "client-token-like-real",
    hostToken: "host-token-like-real",
    gatewayKey: "gateway-key-like-real",
    echo: { replyDelayMs: 50, slowWordMs: 100, retryMs: 100 },
  });
});
afterAll(() => witness?.close());

async function newSession(title: string): Promise<string> {
  return ((await (await post(`${mount()}/session`, { title })).json()) as { id: string }).id;
}

describe("the witness behaves like the real server", () => {
  it("backs off a failing provider as opencode does: each wait twice the one before", async () => {
    const id = await newSession("retry");
    await post(`${mount()}/session/${id}/prompt_async`, { parts: [{ type: "text", text: "FAIL500" }] });
    const next = new Map<number, number>();
    await expect
      .poll(
        async () => {
          const status = (await get<Record<string, { attempt?: number; next?: number }>>(`${mount()}/session/status`))[id];
          if (status?.attempt && status.next) next.set(status.attempt, status.next);
          return next.size >= 4;
        },
        { timeout: 5_000, interval: 20 },
      )
      .toBe(true);
    await post(`${mount()}/session/${id}/abort`, {});
    // The engine's own schedule (its `next`): waits of 200, 400 and 800 ms after the first 100 ms.
    for (const attempt of [2, 3, 4]) {
      const wait = next.get(attempt)! - next.get(attempt - 1)!;
      // Each `next` is stamped when the timer fires, and Node's timers may fire a millisecond early.
      expect(wait).toBeGreaterThanOrEqual(100 * 2 ** (attempt - 1) - 5);
      expect(wait).toBeLessThan(100 * 2 ** (attempt - 1) + 150);
    }
  });

  it("abandons a reply when its engine is killed, as opencode does: no completion, no error, no text, ever", async () => {
    const id = await newSession("crash");
    await post(`${mount()}/session/${id}/prompt_async`, { parts: [{ type: "text", text: "SLOW crash" }] });
    // Mid-reply: the reply's text part exists (empty in the list while it is written).
    await expect.poll(async () => (await get<{ parts: unknown[] }[]>(`${mount()}/session/${id}/message`))[1]?.parts.length, { timeout: 2_000 }).toBe(1);
    witness.setEngineDown(true);
    expect((await fetch(`${mount()}/session/status`, { headers })).status).toBe(500);
    witness.setEngineDown(false);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [, reply] = await get<{ info: { time: { completed?: number }; error?: unknown }; parts: { type: string; text?: string }[] }[]>(
      `${mount()}/session/${id}/message`,
    );
    expect(reply!.info.time.completed).toBeUndefined();
    expect(reply!.info.error).toBeUndefined();
    expect(reply!.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual([""]);
    expect(await get(`${mount()}/session/status`)).toEqual({});
  });

  it("lists sessions natively where OpenWork Web reads them, with snapshot, messages, abort and delete", async () => {
    const id = await newSession("native");
    const base = `${witness.url}/workspace/ws_witness/sessions`;
    expect((await get<{ items: { id: string; title: string }[] }>(base)).items).toContainEqual(expect.objectContaining({ id, title: "native" }));
    expect(await get(`${base}/${id}`)).toMatchObject({ item: { id, title: "native" } });
    const created = await post(base, { title: "from the web", prompt: "hello web" });
    expect(created.status).toBe(201);
    const { item, started } = (await created.json()) as { item: { id: string }; started: boolean };
    expect(started).toBe(true);
    await expect
      .poll(async () => (await get<{ item: { status: { type: string } } }>(`${base}/${item.id}/snapshot`)).item.status.type, { timeout: 2_000 })
      .toBe("idle");
    const snapshot = await get<{ item: { session: { id: string }; messages: { parts: { text?: string }[] }[]; todos: unknown[] } }>(
      `${base}/${item.id}/snapshot`,
    );
    expect(snapshot.item).toMatchObject({ session: { id: item.id }, todos: [] });
    expect(snapshot.item.messages.map((m) => m.parts[0]?.text)).toEqual(["hello web", "echo: hello web"]);
    expect((await get<{ items: unknown[] }>(`${base}/${item.id}/messages`)).items).toHaveLength(2);
    expect(await (await post(`${base}/${item.id}/abort`, {})).json()).toEqual({ ok: true });
    expect((await fetch(`${base}/${id}`, { method: "DELETE", headers })).status).toBe(200);
    const gone = await fetch(`${base}/${id}/snapshot`, { headers });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: "session_not_found", details: { status: 404 } });
    expect((await post(base, { title: "x".repeat(121) })).status).toBe(400);
    expect((await fetch(`${witness.url}/workspace/ws_other/sessions`, { headers })).status).toBe(404);
  });
});

/**
 * The MCP entry and session permission routes, on the witness's echo engine and on a real
 * opencode behind it: `restart` is the engine dying and coming back.
 */
function engineRouteChecks(engine: { mount(): string; restart(): Promise<void> }) {
  it("takes MCP entries as opencode does: every entry's status, a failed connect still 200, dropped when the engine dies", async () => {
    const missing = await post(`${engine.mount()}/mcp`, { name: "ows-rs_x" });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ name: "BadRequest", data: { message: 'Missing key\n  at ["config"]', kind: "Payload" } });
    // Nothing listens on port 9: the entry is held, failed, and the answer is still a 200.
    const config = { type: "remote", url: "http://127.0.0.1:9/mcp", headers: { authorization: "Bearer cred" }, oauth: false, enabled: true };
    const added = await post(`${engine.mount()}/mcp`, { name: "ows-rs_x", config });
    expect(added.status).toBe(200);
    expect(await added.json()).toEqual({ "ows-rs_x": { status: "failed", error: expect.any(String) } });
    expect(await (await post(`${engine.mount()}/mcp`, { name: "ows-rs_y", config: { ...config, enabled: false } })).json()).toEqual({
      "ows-rs_x": { status: "failed", error: expect.any(String) },
      "ows-rs_y": { status: "disabled" },
    });
    expect(await (await post(`${engine.mount()}/mcp/ows-rs_x/disconnect`, {})).json()).toBe(true);
    expect(await get(`${engine.mount()}/mcp`)).toMatchObject({ "ows-rs_x": { status: "disabled" } });
    const unknown = await post(`${engine.mount()}/mcp/nope/disconnect`, {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ _tag: "McpServerNotFoundError", name: "nope" });
    await engine.restart();
    expect(await get(`${engine.mount()}/mcp`)).toEqual({});
  });

  it("keeps a session's permission rules: given at create, appended by PATCH", async () => {
    const deny = { permission: "ows-*", pattern: "*", action: "deny" };
    const allow = { permission: "ows-rs_a_*", pattern: "*", action: "allow" };
    const created = (await (await post(`${engine.mount()}/session`, { title: "ruled", permission: [deny] })).json()) as { id: string; permission: unknown };
    expect(created.permission).toEqual([deny]);
    const patched = await fetch(`${engine.mount()}/session/${created.id}`, { method: "PATCH", headers, body: JSON.stringify({ permission: [allow] }) });
    expect(await patched.json()).toMatchObject({ id: created.id, permission: [deny, allow] });
    expect(await get(`${engine.mount()}/session/${created.id}`)).toMatchObject({ permission: [deny, allow] });
  });
}

describe("the echo engine's MCP entry and permission routes", () => {
  engineRouteChecks({
    mount,
    restart: async () => {
      witness.setEngineDown(true);
      witness.setEngineDown(false);
    },
  });
});

describe("the same routes on a real opencode", () => {
  let opencode: RealOpencode;
  let real: RunningWitness;
  beforeAll(async () => {
    opencode = await startRealOpencode();
    real = await startWitnessWorker({
      clientToken: "client-token-like-real",
      hostToken: "host-token-like-real-2",
      gatewayKey: "gateway-key-like-real-2",
      opencode: { url: opencode.url, directory: opencode.directory },
    });
  }, 90_000);
  afterAll(async () => {
    real?.close();
    await opencode?.stop();
  });
  engineRouteChecks({ mount: () => `${real.url}/workspace/ws_witness/opencode`, restart: () => opencode.restart() });
});
