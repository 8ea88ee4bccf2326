import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type AuditEvent, remoteSessionContext } from "@openwork/mcp-capability";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken, runRunner } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { Hono } from "hono";
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionHost, DEFAULT_SCHEMA, type RemoteSessionHost } from "./index.js";

const db = useTestDatabase();
const member = { organizationId: "org_host", memberId: "mem_host" };
const ctx = remoteSessionContext({ organizationId: "org_host", userId: "user_host", orgMembershipId: "mem_host", scopes: ["mcp:read", "mcp:write"] });
const SECRET = "remote-session-host-test-secret-0123456789";

const hostOn = (sql: Sql, baseUrl: string, audit: AuditEvent[] = []) =>
  createRemoteSessionHost({
    sql,
    baseUrl,
    desktop: {
      secret: SECRET,
      authenticateMember: async (request) => (request.headers.get("authorization") === "Bearer member-token" ? member : null),
      timings: { sweepIntervalMs: 200 },
    },
    isActiveMember: async (scope) => scope.memberId === member.memberId,
    audit: (event) => void audit.push(event),
  });

describe("createRemoteSessionHost", () => {
  it("refuses at start a handle that resolves names in public, naming the fix, and leaves public empty", async () => {
    const host = hostOn(db.current.sql, "http://127.0.0.1:1");
    try {
      await expect(host.start()).rejects.toThrow(`create it with postgres(url, { connection: { search_path: "${DEFAULT_SCHEMA}" } })`);
      const [row] = await db.current.sql`select count(*)::int as n from information_schema.tables where table_schema = 'public'`;
      expect(row?.n).toBe(0);
    } finally {
      await host.close();
    }
  });

  describe("mounted in a Hono app, with a desktop runner", () => {
    let sql: Sql;
    let host: RemoteSessionHost;
    let server: ReturnType<typeof serve>;
    let baseUrl: string;
    const audit: AuditEvent[] = [];

    beforeAll(async () => {
      sql = postgres(db.current.url, { max: 5, onnotice: () => {}, connection: { search_path: DEFAULT_SCHEMA } });
      const app = new Hono();
      // The port is known once listening; the host is made then (its base URL is the token audience).
      server = serve({ fetch: (request) => app.fetch(request), hostname: "127.0.0.1", port: 0 });
      await new Promise((resolve) => server.once("listening", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      host = hostOn(sql, baseUrl, audit);
      await host.start();
      app.route("/", host.runnerRoutes);
    });
    afterAll(async () => {
      await host?.close();
      await new Promise((resolve) => server?.close(resolve));
      await sql?.end();
    });

    it("puts its tables in the dedicated schema", async () => {
      const tables = await sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = ${DEFAULT_SCHEMA} order by 1`;
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["remote_session", "desktop_task", "desktop_runner", "mcp_session"]));
    });

    it("runs a turn on the member's desktop: mint through the member route, claim, answer; the source reads the reply; the audit hears the create", async () => {
      const minted = await requestRunnerToken({
        baseUrl,
        memberToken: "member-token",
        request: {
          runnerId: "runner-host-test",
          name: "Host Test Desktop",
          platform: "linux",
          appVersion: "1.0.0",
          protocolVersion: RUNNER_PROTOCOL_VERSION,
          capabilities: [...RUNNER_CAPABILITIES],
        },
      });
      const ended = new Promise<string>((resolve) => {
        const runner = runRunner({
          client: createRunnerClient({ baseUrl, token: minted.token }),
          gatewayProtocolVersion: minted.protocolVersion,
          handlers: {
            "remote_session.create": async (task, { emit }) => {
              emit({ type: "session.bound", payload: { localSessionId: `local-${task.taskId}` } });
              emit({ type: "assistant.final", payload: { messageId: `${task.taskId}_reply`, text: "the host's desktop answered" } });
              return { status: "done", localSessionId: `local-${task.taskId}` };
            },
          },
          onTaskEnd: (outcome) => void runner.stop().then(() => resolve(outcome.status)),
        });
      });
      const created = (
        await host.source.execute(
          ctx,
          { kind: "remoteSession", name: "remote-session:create" },
          { body: { target: "desktop", title: "host turn", prompt: "hello" } },
        )
      ).structuredContent;
      expect(created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: "desktop" });
      expect(await ended).toBe("done");
      let read = (
        await host.source.execute(ctx, { kind: "remoteSession", name: "remote-session:read" }, { body: { sessionId: created.sessionId, waitMs: 5_000 } })
      ).structuredContent;
      for (let i = 0; i < 10 && read.state !== "idle"; i++) {
        read = (
          await host.source.execute(
            ctx,
            { kind: "remoteSession", name: "remote-session:read" },
            { body: { sessionId: created.sessionId, waitMs: 2_000, cursor: read.cursor } },
          )
        ).structuredContent;
      }
      expect(read).toMatchObject({ state: "idle", finalAssistantText: "the host's desktop answered" });
      expect(audit).toContainEqual(expect.objectContaining({ action: "create", sessionId: created.sessionId, outcome: "ok", organizationId: "org_host" }));
      expect(JSON.stringify(audit)).not.toContain("hello");
    });

    it("answers a runner request without a token with a typed 401 from the mounted routes", async () => {
      const response = await fetch(`${baseUrl}/v1/desktop-runner/work`);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: expect.any(String) });
    });

    it("offers the remote-sessions skill beside the source", async () => {
      expect(host.skills.parseName("skill:remote-sessions")).toEqual({ kind: "builtinSkill", name: "skill:remote-sessions" });
    });
  });
});
