import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type CloudTarget, createCloudTarget, createHttpWorkerResolver } from "@openwork/cloud-target";
import type { LedgerSession } from "@openwork/remote-session-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";

// The cloud target's own MCP entry per session, on the echo engine (which keeps entries and
// session rules as opencode does): a stand-in gateway whose one tool answers with the caller's
// credential, after a second when asked `slow`.
let witness: RunningWitness;
let gateway: { url: string; registrations: string[]; close(): void };
let target: CloudTarget;
const headers = { authorization: "Bearer client-token-entry", "content-type": "application/json" };
const mount = () => `${witness.url}/workspace/ws_witness/opencode`;
const call = () => ({ organizationId: "org_e", userId: "user_e", memberId: "mem_e", referenceId: "ref_entry" });

beforeAll(async () => {
  witness = await startWitnessWorker({
    clientToken: "client-token-entry",
    hostToken: "host-token-entry",
    gatewayKey: "gateway-key-entry",
    echo: { replyDelayMs: 20 },
  });
  gateway = await startToolServer();
  target = createCloudTarget({
    resolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-entry" }),
    isCloudEnabled: async () => true,
    sessionMcp: ({ sessionId }) => ({ url: gateway.url, authorization: `Bearer cred-${sessionId}` }),
  });
});
afterAll(() => {
  target?.close();
  witness?.close();
  gateway?.close();
});

/** A worker session made without the cloud target (as before sessions had their own entries), and its row. */
async function engineSession(id: string): Promise<LedgerSession> {
  const created = (await (await fetch(`${mount()}/session`, { method: "POST", headers, body: JSON.stringify({ title: id }) })).json()) as { id: string };
  const targetRef = { workerId: "wkr_witness", workspaceId: "ws_witness" };
  return { id, state: "idle", depth: 0, targetSessionId: created.id, targetRef } as unknown as LedgerSession;
}
const capability = (name: string) => `CAPABILITY ${JSON.stringify({ name, body: {} })}`;

/** The text of the session's last reply once its turn is over. */
async function lastReply(remoteId: string): Promise<string> {
  let text = "";
  await expect
    .poll(
      async () => {
        const status = (await (await fetch(`${mount()}/session/status`, { headers })).json()) as Record<string, unknown>;
        const messages = (await (await fetch(`${mount()}/session/${remoteId}/message`, { headers })).json()) as { parts: { text?: string }[] }[];
        text =
          messages
            .at(-1)
            ?.parts.map((p) => p.text ?? "")
            .join("") ?? "";
        return status[remoteId] === undefined && text.length > 0;
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(true);
  return text;
}

it("gives a session made before its own entry the rules once, so it calls as itself only", async () => {
  // Another session's entry is registered first: a session without rules would call through it.
  await target.send(call(), await engineSession("rs_other"), { prompt: "hello" });
  const old = await engineSession("rs_old");
  const sent = await target.send(call(), old, { prompt: capability("whoami") });
  expect(sent.targetRef).toMatchObject({ ownMcpEntry: true });
  expect(await lastReply(old.targetSessionId!)).toBe("echo: the tool said called as Bearer cred-rs_old");
  const info = (await (await fetch(`${mount()}/session/${old.targetSessionId}`, { headers })).json()) as { permission: unknown[] };
  expect(info.permission).toEqual([
    { permission: "ows-*", pattern: "*", action: "deny" },
    { permission: "openwork_*", pattern: "*", action: "deny" },
    { permission: "ows-rs_old_*", pattern: "*", action: "allow" },
  ]);
});

it("keeps the entry a running turn calls through when a prompt is sent meanwhile", async () => {
  const session = await engineSession("rs_busy");
  await target.send(call(), session, { prompt: capability("slow") });
  await expect
    .poll(async () => ((await (await fetch(`${mount()}/session/status`, { headers })).json()) as Record<string, unknown>)[session.targetSessionId!])
    .toBeDefined();
  await target.send(call(), { ...session, state: "running" } as LedgerSession, { prompt: "and then" });
  const replies = async () =>
    ((await (await fetch(`${mount()}/session/${session.targetSessionId}/message`, { headers })).json()) as { parts: { text?: string }[] }[])
      .map((m) => m.parts.map((p) => p.text ?? "").join(""))
      .filter((text) => text.startsWith("echo: "));
  await expect.poll(replies, { timeout: 10_000 }).toEqual(["echo: the tool said called as Bearer cred-rs_busy", "echo: and then"]);
  expect(gateway.registrations.filter((r) => r === "Bearer cred-rs_busy")).toHaveLength(1);
});

/** A stateless MCP server (JSON answers) with one tool, `execute_capability`, that tells who called. */
async function startToolServer() {
  const registrations: string[] = [];
  const server = createServer(async (request, response) => {
    if (request.method !== "POST") return void response.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: number; method: string; params?: { arguments?: { name?: string } } };
    const caller = request.headers.authorization ?? "";
    if (message.id === undefined) return void response.writeHead(202).end();
    if (message.method === "initialize") registrations.push(caller);
    if (message.params?.arguments?.name === "slow") await new Promise((resolve) => setTimeout(resolve, 1_000));
    const results: Record<string, unknown> = {
      initialize: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "tool-server", version: "1" } },
      "tools/list": { tools: [{ name: "execute_capability", inputSchema: { type: "object" } }] },
      "tools/call": { content: [{ type: "text", text: `called as ${caller}` }] },
    };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: results[message.method] ?? {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    registrations,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
