import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent, AuditIntent } from "./audit.js";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import { remoteSessionContext, type SearchContext } from "./registry-context.js";
import { createScriptedTarget } from "./scripted-target.testing.js";

// What den-api needs beyond the registry contract: every parsed kind may reach `execute` (its
// declared type), and its audit of remote-session actions, through the source's hook.
const db = useTestDatabase();
const ctx: SearchContext = remoteSessionContext({
  organizationId: "org_audit",
  userId: "user_audit",
  orgMembershipId: "mem_audit",
  scopes: ["mcp:read", "mcp:write"],
});
const audited: AuditEvent[] = [];
let source: RemoteSessionSource;

beforeAll(async () => {
  await migrate(db.current.sql);
  source = createRemoteSessionSource({
    targets: [createScriptedTarget("cloud")],
    ledger: createSessionLedger(db.current.sql),
    audit: async (event) => {
      audited.push(event);
      if (event.action === "stop") throw new Error("the audit store is down");
    },
  });
});

const run = async (name: string, body: unknown) => (await source.execute(ctx, { kind: "remoteSession", name }, { name, body })).structuredContent;

describe("den-api adopting the source", () => {
  it("answers unknown_capability for every parsed kind that is not its own, and for a remoteSession name it does not parse", async () => {
    const others = [
      { kind: "catalog", name: "listMembers" },
      { kind: "native", name: "github:issues", connectionId: "c1", toolName: "issues" },
      { kind: "externalMcp", name: "x:y", connectionId: "c2", toolName: "y" },
      { kind: "marketplace", name: "plugin:p:o", configObjectId: "o", pluginId: "p" },
      { kind: "builtinSkill", name: "skill:remote-sessions" },
      { kind: "admin", name: "admin:users", toolName: "users" },
      { kind: "remoteSession", name: "remote-session:delete", action: "delete" },
    ];
    for (const parsed of others) {
      const result = await source.execute(ctx, parsed, { name: parsed.name, body: {} });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: "unknown_capability" });
    }
    expect(audited).toEqual([]);
  });

  it("tells the audit hook of each create, send and stop with who, which session and the outcome, never prompt text, and a failing hook is not the caller's error", async () => {
    const secret = "prompt text that must stay out of the audit";
    const created = await run("remote-session:create", { prompt: secret });
    const sessionId = String(created.sessionId);
    await run("remote-session:send", { sessionId, prompt: secret });
    await run("remote-session:read", { sessionId });
    await run("remote-session:send", { sessionId: "rs_00000000000000000000000000", prompt: secret });
    const stopped = await run("remote-session:stop", { sessionId });
    expect(stopped).not.toHaveProperty("error");

    expect(audited.map((e) => [e.action, e.outcome])).toEqual([
      ["create", "ok"],
      ["send", "ok"],
      ["send", "unknown_session"],
      ["stop", "ok"],
    ]);
    for (const event of audited) {
      expect(event).toMatchObject({ organizationId: "org_audit", userId: "user_audit", memberId: "mem_audit", referenceId: expect.stringMatching(/^ref_/) });
    }
    expect(audited.filter((e) => e.outcome === "ok").every((e) => e.sessionId === sessionId)).toBe(true);
    expect(JSON.stringify(audited)).not.toContain("prompt text");
  });

  it("refuses create, send, respond and stop with a retryable audit_unavailable while the audit log cannot record, with nothing done", async () => {
    const cloud = createScriptedTarget("cloud");
    const ledger = createSessionLedger(db.current.sql);
    let storeDown = false;
    const begun: AuditIntent[] = [];
    const ended: AuditEvent[] = [];
    const failClosed = createRemoteSessionSource({
      targets: [cloud],
      ledger,
      audit: {
        begin: async (intent) => {
          if (storeDown) throw new Error("the audit store is down");
          begun.push(intent);
        },
        end: async (event) => void ended.push(event),
      },
    });
    const member = remoteSessionContext({
      organizationId: "org_audit_down",
      userId: "user_down",
      orgMembershipId: "mem_down",
      scopes: ["mcp:read", "mcp:write"],
    });
    const call = async (name: string, body: unknown) => (await failClosed.execute(member, { kind: "remoteSession", name }, { name, body })).structuredContent;
    const sessionId = String((await call("remote-session:create", { prompt: "first" })).sessionId);
    cloud.ask(sessionId, { kind: "permission", id: "per_down", title: "bash", detail: "ls", askedAt: new Date().toISOString() });
    expect(begun.map((intent) => intent.action)).toEqual(["create"]);
    expect(ended.map((event) => [event.action, event.outcome])).toEqual([["create", "ok"]]);

    storeDown = true;
    const before = { sessions: cloud.sessions.size, sends: cloud.sends.length, listed: (await call("remote-session:list", {})).sessions };
    for (const [name, body] of [
      ["remote-session:create", { prompt: "never sent" }],
      ["remote-session:send", { sessionId, prompt: "never sent" }],
      ["remote-session:respond", { sessionId, requestId: "per_down", answer: { permission: "once" } }],
      ["remote-session:stop", { sessionId }],
    ] as const) {
      expect(await call(name, body)).toMatchObject({ error: "audit_unavailable", retryable: true, retryAfterMs: 1_000, referenceId: expect.any(String) });
    }
    // Nothing ran: no session, no prompt, the question still waits, the session was not stopped.
    expect(cloud.sessions.size).toBe(before.sessions);
    expect(cloud.sends).toHaveLength(before.sends);
    expect(cloud.stopsTaken.size).toBe(0);
    expect(cloud.sessions.get(sessionId)?.pending?.id).toBe("per_down");
    expect((await call("remote-session:list", {})).sessions).toEqual(before.listed);
    // Reads are not audited actions: they still answer.
    expect(await call("remote-session:read", { sessionId })).toMatchObject({ sessionId, pending: { id: "per_down" } });
    // A refused call never began, so nothing ends; nor does one refused before it could run.
    expect(ended).toHaveLength(1);
    const readOnly = remoteSessionContext({ organizationId: "org_audit_down", userId: "user_down", orgMembershipId: "mem_down", scopes: ["mcp:read"] });
    const refused = await failClosed.execute(readOnly, { kind: "remoteSession", name: "remote-session:create" }, { body: { prompt: "no scope" } });
    expect(refused.structuredContent).toMatchObject({ error: "insufficient_mcp_scope" });
    expect(ended).toHaveLength(1);
    // The store back, calls run and are recorded, each intent with its outcome.
    storeDown = false;
    expect(await call("remote-session:stop", { sessionId })).not.toHaveProperty("error");
    expect(ended.map((event) => [event.action, event.outcome])).toEqual([
      ["create", "ok"],
      ["stop", "ok"],
    ]);
  });

  it("refuses a write whose audit log does not answer within its bound, with nothing done", async () => {
    const cloud = createScriptedTarget("cloud");
    const hung = createRemoteSessionSource({
      targets: [cloud],
      ledger: createSessionLedger(db.current.sql),
      auditTimeoutMs: 100,
      audit: { begin: () => new Promise<void>(() => {}), end: () => {} },
    });
    const member = remoteSessionContext({
      organizationId: "org_audit_hung",
      userId: "user_hung",
      orgMembershipId: "mem_hung",
      scopes: ["mcp:read", "mcp:write"],
    });
    const started = Date.now();
    const result = await hung.execute(member, { kind: "remoteSession", name: "remote-session:create" }, { body: { prompt: "never sent" } });
    expect(result.structuredContent).toMatchObject({ error: "audit_unavailable", retryable: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(cloud.sessions.size).toBe(0);
  });
});
