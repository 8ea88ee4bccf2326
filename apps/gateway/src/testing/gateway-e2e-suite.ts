import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { startOpenworkDesktopDouble } from "@openwork/desktop-target/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevMember } from "../dev-members.js";
import type { McpEndpointFactory } from "../mcp-endpoint.js";
import { serveGateway } from "../serve-gateway.js";
import { handOff } from "./scripted-agent.js";

/** What the suite needs of an MCP client; the v1 `Client` and the v2 client package both have it. */
export interface E2eClient {
  listTools(): Promise<{ tools: { name: string; _meta?: Record<string, unknown> | undefined; inputSchema: unknown; annotations?: unknown }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResources(): Promise<{ resources: { uri: string; mimeType?: string | undefined }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  close(): Promise<void>;
}

export interface GatewayE2eOptions {
  /** Which SDK generation the gateway and the client are on. */
  generation: string;
  /** The gateway's endpoint (default: the reference gateway's, server 2.x). */
  mcpEndpoint?: McpEndpointFactory;
  /** Connects that generation's real client with a bearer token. */
  connect(url: URL, token: string): Promise<E2eClient>;
}

/**
 * The gateway end to end, through a real MCP client of one SDK generation, a real desktop runner
 * process, the witness cloud worker and PostgreSQL. Every result is checked for den-api's
 * rendering: its one text part is the JSON of its structuredContent.
 */
export function describeGatewayE2e(options: GatewayE2eOptions): void {
  const db = useTestDatabase();
  const ORG = "org_e2e";
  const member = (name: string, scopes: string[]): DevMember => ({
    name,
    organizationId: ORG,
    memberId: `mem_${name}`,
    mcpToken: `mcp_${name}_token_0123456789`,
    sessionToken: `session_${name}_token_0123456789`,
    scopes,
  });
  const alice = member("alice", ["mcp:read", "mcp:write"]);
  const bob = member("bob", ["mcp:read", "mcp:write"]);
  const reader = member("reader", ["mcp:read"]);
  // Carol's only desktop is an OpenWork desktop of the field, speaking OpenWork's runner channel.
  const carol = member("carol", ["mcp:read", "mcp:write"]);
  // Removed from the organization: the token still verifies, but den-api's context has `member: null`.
  const outsider = { ...member("outsider", ["mcp:read", "mcp:write"]), active: false };
  const members = [alice, bob, reader, outsider, carol];
  const cloudOrganizations = new Set([ORG]);
  const SECRET_WORDS = "zebra-quartz-prompt";

  let gateway: Awaited<ReturnType<typeof serveGateway>>;
  let witness: RunningWitness;
  let sql: postgres.Sql;
  const logLines: string[] = [];
  const clients: E2eClient[] = [];
  let runner: ChildProcess | undefined;
  let runnerHome: string;

  async function connect(who: DevMember): Promise<E2eClient> {
    const client = await options.connect(new URL(gateway.mcpUrl), who.mcpToken);
    clients.push(client);
    return client;
  }

  type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };
  /** A tool call, checked for den-api's rendering: one text part, the JSON of structuredContent; isError only on errors. */
  const call = async (client: E2eClient, name: string, args: Record<string, unknown>): Promise<Result> => {
    const result = (await client.callTool({ name, arguments: args })) as Result;
    expect(result.content).toHaveLength(1);
    expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    expect(result.isError === true || result.isError === undefined).toBe(true);
    return result;
  };
  const execute = (client: E2eClient, name: string, body: unknown): Promise<Result> => call(client, "execute_capability", { name, body });
  const ok = async (client: E2eClient, name: string, body: unknown): Promise<Record<string, unknown>> => {
    const result = await execute(client, name, body);
    if (result.isError) throw new Error(`${name} failed: ${result.content[0]?.text}`);
    return result.structuredContent!;
  };
  async function readUntil(client: E2eClient, sessionId: string, done: (r: Record<string, unknown>) => boolean, timeoutMs = 15_000, cursor?: unknown) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const read = await ok(client, "remote-session:read", { sessionId, waitMs: 1_000, ...(cursor ? { cursor } : {}) });
      if (done(read)) return read;
      if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${String(read.state)}`);
    }
  }

  function startRunnerProcess(): ChildProcess {
    const require = createRequire(import.meta.url);
    const main = join(dirname(require.resolve("@openwork/desktop-runner/package.json")), "dist", "main.js");
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH,
        GATEWAY_URL: gateway.baseUrl,
        MEMBER_SESSION_TOKEN: alice.sessionToken,
        RUNNER_NAME: "E2E Desktop",
        RUNNER_ID_FILE: join(runnerHome, "runner-id"),
      },
      stdio: "ignore",
    });
    return child;
  }

  beforeAll(async () => {
    runnerHome = await mkdtemp(join(tmpdir(), "openwork-e2e-runner-"));
    witness = await startWitnessWorker({ clientToken: "client-token-e2e", hostToken: "host-token-e2e", gatewayKey: "gateway-key-e2e", wakeDelayMs: 1_000 });
    sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
    gateway = await serveGateway({
      sql,
      ...(options.mcpEndpoint ? { mcpEndpoint: options.mcpEndpoint } : {}),
      port: 0,
      members: () => members,
      cloudEnabled: (org) => cloudOrganizations.has(org),
      runnerTokenSecret: "e2e-runner-secret-0123456789abcdef",
      cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-e2e" }),
      webUrlTemplate: "https://web.openwork.test/w/{workspaceId}/s/{sessionId}",
      logger: {
        info: (m, f) => void logLines.push(`${m} ${JSON.stringify(f)}`),
        warn: (m, f) => void logLines.push(`${m} ${JSON.stringify(f)}`),
        error: (m, f) => void logLines.push(`${m} ${JSON.stringify(f)}`),
      },
      timings: { leaseMs: 3_000, heartbeatIntervalMs: 500, sweepIntervalMs: 200, cloudBudgetMs: 500 },
    });
    runner = startRunnerProcess();
    // Wait until the runner holds its wake stream.
    const deadline = Date.now() + 15_000;
    while (gateway.hub.stats().runnerStreams < 1) {
      if (Date.now() > deadline) throw new Error("the desktop runner never connected");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 60_000);

  afterAll(async () => {
    runner?.kill("SIGKILL");
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await gateway?.close();
    await witness?.close();
    await sql?.end({ timeout: 5 });
    await rm(runnerHome, { recursive: true, force: true });
    // Logs carry ids, codes and sizes: never prompt text.
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join("\n")).not.toContain(SECRET_WORDS);
  });

  describe(`the gateway end to end, through a real MCP client (${options.generation})`, () => {
    it("lists the two tools with the card linked, and the card resource", async () => {
      const client = await connect(alice);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["execute_capability", "search_capabilities"]);
      expect(tools.find((t) => t.name === "execute_capability")?._meta).toMatchObject({ ui: { resourceUri: "ui://openwork/remote-session/v1/card.html" } });
      // Not destructive: clients that gate destructive tools behind an approval still let reads run.
      expect(tools.find((t) => t.name === "execute_capability")).toMatchObject({ annotations: { readOnlyHint: false, destructiveHint: false } });
      expect(tools.find((t) => t.name === "search_capabilities")).toMatchObject({ annotations: { readOnlyHint: true } });
      const { resources } = await client.listResources();
      expect(resources).toContainEqual(expect.objectContaining({ uri: "ui://openwork/remote-session/v1/card.html", mimeType: "text/html;profile=mcp-app" }));
      const card = await client.readResource({ uri: "ui://openwork/remote-session/v1/card.html" });
      expect(card.contents[0]).toMatchObject({ mimeType: "text/html;profile=mcp-app", text: expect.stringContaining("<!doctype html>") });
      // body is described, so clients and the Inspector show where the arguments go.
      const execute = tools.find((t) => t.name === "execute_capability")!.inputSchema as { properties: Record<string, { description?: string }> };
      expect(execute.properties.body?.description).toMatch(/arguments/);
    });

    it("refuses execute_capability arguments outside body, naming body, and changes nothing", async () => {
      const client = await connect(alice);
      const before = ((await ok(client, "remote-session:list", {})).sessions as unknown[]).length;
      for (const args of [
        { name: "remote-session:create", arguments: { target: "desktop", prompt: "lost" } },
        { name: "remote-session:create", target: "desktop", prompt: "flat" },
      ]) {
        const refused = await call(client, "execute_capability", args);
        expect(refused.isError).toBe(true);
        expect(refused.structuredContent).toMatchObject({ error: "invalid_capability_arguments", message: expect.stringContaining("body") });
      }
      expect(((await ok(client, "remote-session:list", {})).sessions as unknown[]).length).toBe(before);
      // A JSON string body is read as JSON, as den-api does.
      expect(await ok(client, "remote-session:targets", '{"includeModels":false}')).toMatchObject({
        targets: [{ name: "cloud", available: true, default: true }, { name: "desktop" }],
      });
    });

    it("finds the capabilities with search_capabilities (arguments in the text too), and hides them from a non-member", async () => {
      // The default limit shows every action.
      const found = await call(await connect(alice), "search_capabilities", { query: "remote session" });
      const names = (found.structuredContent!.matches as { name: string }[]).map((m) => m.name).sort();
      // The built-in skill that teaches the flow is found beside the actions, as den-api's registry finds its skills.
      expect(names).toEqual([
        "remote-session:create",
        "remote-session:list",
        "remote-session:read",
        "remote-session:respond",
        "remote-session:send",
        "remote-session:stop",
        "remote-session:targets",
        "skill:remote-sessions",
      ]);
      const match = (found.structuredContent!.matches as Record<string, unknown>[]).find((m) => m.name === "remote-session:create")!;
      expect(match).toMatchObject({ kind: "remote_session", invocation: { argumentsField: "body" }, argumentsSchema: { type: "object" } });
      const hidden = await call(await connect(outsider), "search_capabilities", { query: "remote session" });
      // No action for a non-member; built-in skills are for every caller, as den-api serves them.
      expect((hidden.structuredContent!.matches as { name: string }[]).map((m) => m.name)).toEqual(["skill:remote-sessions"]);
      expect((await execute(await connect(outsider), "remote-session:list", {})).structuredContent).toMatchObject({ error: "membership_required" });
    });

    it("drives a desktop session: delivered within a second, read with cursor and waitMs, a follow-up, list and targets", async () => {
      const client = await connect(alice);
      const targets = await ok(client, "remote-session:targets", {});
      expect(targets).toMatchObject({
        targets: [
          { name: "cloud", label: "Cloud", available: true, default: true },
          { name: "desktop", label: "Desktop", available: true, default: false, machines: [{ name: "E2E Desktop", online: true }] },
        ],
      });

      const created = await ok(client, "remote-session:create", { target: "desktop", title: "E2E desktop", prompt: `hello ${SECRET_WORDS}` });
      const returnedAt = Date.now();
      expect(created).toMatchObject({ target: "desktop", state: "queued", runner: { name: "E2E Desktop" } });
      const sessionId = String(created.sessionId);
      // The runner on the SSE stream holds the task well within a second.
      for (;;) {
        // The proposal's spelling is an alias.
        const read = await ok(client, "remoteSession.read", { sessionId });
        if (read.state !== "queued") break;
        expect(Date.now() - returnedAt).toBeLessThan(1_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const first = await readUntil(client, sessionId, (r) => r.state === "idle");
      const all = await ok(client, "remote-session:read", { sessionId });
      expect((all.messages as { role: string; text: string | null }[]).map((m) => [m.role, m.text])).toEqual([
        ["user", null],
        ["assistant", `echo: hello ${SECRET_WORDS}`],
      ]);
      expect(first.state).toBe("idle");

      const sent = await ok(client, "remote-session:send", { sessionId, prompt: "second turn" });
      expect(sent).toMatchObject({ state: "accepted", alreadyPresent: false });
      const next = await readUntil(client, sessionId, (r) => r.state === "idle" && (r.messages as unknown[]).length === 2, 15_000, all.cursor);
      // Only the new turn: the cursor never repeats a message.
      expect((next.messages as { role: string; text: string | null }[]).map((m) => m.text)).toEqual([null, "echo: second turn"]);
      expect(next.finalAssistantText).toBe("echo: second turn");

      const list = await ok(client, "remote-session:list", {});
      expect((list.sessions as { sessionId: string }[]).map((s) => s.sessionId)).toContain(sessionId);
      expect(list.machines).toEqual([expect.objectContaining({ target: "desktop", name: "E2E Desktop", online: true })]);
    });

    it("stops a running desktop turn", async () => {
      const client = await connect(alice);
      const created = await ok(client, "remote-session:create", { target: "desktop", prompt: "SLOW one two three four five six" });
      await readUntil(client, String(created.sessionId), (r) => r.state === "running");
      expect(await ok(client, "remote-session:stop", { sessionId: created.sessionId })).toMatchObject({
        sessionId: created.sessionId,
        target: "desktop",
        stopped: true,
      });
      const stopped = await readUntil(client, String(created.sessionId), (r) => r.state === "stopped");
      expect(stopped.state).toBe("stopped");
    });

    it("answers desktop_offline at once, with the human step, when the member has no desktop; deliverBy expires instead", async () => {
      const client = await connect(bob);
      const offline = await execute(client, "remote-session:create", { target: "desktop", prompt: "anyone?" });
      expect(offline.isError).toBe(true);
      expect(offline.structuredContent).toMatchObject({
        error: "desktop_offline",
        retryable: true,
        action: expect.stringContaining("Open OpenWork Desktop"),
        referenceId: expect.stringMatching(/^ref_/),
      });
      const later = await ok(client, "remote-session:create", { target: "desktop", prompt: "later", deliverBy: new Date(Date.now() + 1_000).toISOString() });
      const expired = await readUntil(client, String(later.sessionId), (r) => r.state === "expired", 8_000);
      expect(expired.lastError).toMatchObject({ error: "delivery_deadline_passed" });
    });

    it("stops a cloud session only when something runs, never reports a session the worker lost as stopped, and sends a messageId once", async () => {
      const client = await connect(alice);
      const created = await ok(client, "remote-session:create", { target: "cloud", title: "stop me" });
      // Idle: nothing to stop, and list and read keep agreeing.
      expect(await ok(client, "remote-session:stop", { sessionId: created.sessionId })).toEqual({
        sessionId: created.sessionId,
        target: "cloud",
        stopped: false,
        state: "idle",
        next: { name: "remote-session:send", body: { sessionId: created.sessionId, prompt: "<your next message>" } },
      });
      const listed = (await ok(client, "remote-session:list", { target: "cloud" })).sessions as { sessionId: string; state: string }[];
      expect(listed.find((s) => s.sessionId === created.sessionId)?.state).toBe("idle");
      // Two sends of one messageId at once: one prompt reaches the worker.
      const sends = await Promise.all(
        [1, 2].map(() => ok(client, "remote-session:send", { sessionId: created.sessionId, prompt: "once", messageId: "msg_race0000000001" })),
      );
      expect(sends.map((s) => s.alreadyPresent).sort()).toEqual([false, true]);
      const read = await readUntil(client, String(created.sessionId), (r) => r.state === "idle" && (r.messages as unknown[]).length > 0);
      // The worker appends a second prompt with the same id to that message, so its text tells.
      const prompts = (read.messages as { id: string; role: string; text: string }[]).filter((m) => m.role === "user");
      expect(prompts.map((m) => [m.id, m.text])).toEqual([["msg_race0000000001", "once"]]);
      // A workspace the worker does not have is named as such, and creates nothing.
      expect((await execute(client, "remote-session:create", { target: "cloud", workspaceId: "ws_other" })).structuredContent).toMatchObject({
        error: "unknown_workspace",
      });
      // The worker loses the session: a stop is refused as unknown, not reported as done.
      const remoteId = /\/s\/(ses_[^/?]+)/.exec(String(created.webUrl))![1]!;
      await fetch(`${witness.url}/workspace/ws_witness/opencode/session/${remoteId}`, {
        method: "DELETE",
        headers: { authorization: "Bearer client-token-e2e" },
      });
      expect((await execute(client, "remote-session:stop", { sessionId: created.sessionId })).structuredContent).toMatchObject({ error: "unknown_session" });
    });

    it("drives a session on an OpenWork desktop of the field (its own dialect and token) next to our runner: create → read → send → read → stop", async () => {
      // As an unmodified desktop does: its base URL is `<origin>/api/den`.
      const desktop = await startOpenworkDesktopDouble({
        baseUrl: `${gateway.baseUrl}/api/den`,
        memberToken: carol.sessionToken,
        runnerId: "carol-macbook-install",
        pollMs: 200,
        drainMs: 100,
        replyDelayMs: 100,
      });
      try {
        const client = await connect(carol);
        const targets = await ok(client, "remote-session:targets", {});
        expect(JSON.stringify(targets)).toContain("carol-macbook-install");
        const created = await ok(client, "remote-session:create", { target: "desktop", title: "On Carol's Mac", prompt: "hello from the field" });
        const first = await readUntil(client, String(created.sessionId), (r) => r.finalAssistantText === "echo: hello from the field");
        expect((first.messages as { role: string; text: string }[]).map((m) => [m.role, m.text])).toEqual([
          ["user", "hello from the field"],
          ["assistant", "echo: hello from the field"],
        ]);
        await ok(client, "remote-session:send", { sessionId: created.sessionId, prompt: "and more" });
        const second = await readUntil(client, String(created.sessionId), (r) => r.finalAssistantText === "echo: and more", 15_000, first.cursor);
        expect((second.messages as { text: string }[]).map((m) => m.text)).toEqual(["and more", "echo: and more"]);
        await ok(client, "remote-session:send", { sessionId: created.sessionId, prompt: "SLOW and long" });
        await readUntil(client, String(created.sessionId), (r) => r.state === "running", 15_000, second.cursor);
        expect(await ok(client, "remote-session:stop", { sessionId: created.sessionId })).toMatchObject({ sessionId: created.sessionId, stopped: true });
        expect(desktop.retired).toBe(false);
        // Our own runner (Alice's) kept working beside it on the same gateway.
        const aliceClient = await connect(alice);
        const ours = await ok(aliceClient, "remote-session:create", { target: "desktop", prompt: "ours too" });
        expect((await readUntil(aliceClient, String(ours.sessionId), (r) => r.state === "idle")).state).toBe("idle");
      } finally {
        await desktop.stop();
      }
    });

    it("shows every client's model the next step and the arguments, whether it reads only JSON (Claude Code, Codex) or only text (opencode)", async () => {
      const client = await connect(alice);
      // The two model-input rules, as recorded from the real clients.
      const views = (result: Result) => ({ json: JSON.stringify(result.structuredContent), text: result.content.map((c) => c.text).join("\n") });
      const visible = (result: Result, ...needles: string[]) => {
        const { json, text } = views(result);
        for (const needle of needles) {
          expect(json, `JSON-only model: ${needle}`).toContain(needle);
          expect(text, `text-only model: ${needle}`).toContain(needle);
        }
      };
      const search = await call(client, "search_capabilities", { query: "remote session" });
      visible(search, ...["create", "send", "read", "stop", "list", "targets"].map((a) => `"remote-session:${a}"`));
      visible(search, '"argumentsSchema"', '"target"', '"waitMs"', '"cursor"', '"argumentsField":"body"');
      const created = await execute(client, "remote-session:create", { target: "cloud", prompt: "what do you see" });
      visible(created, '"next":{"name":"remote-session:read"', '"waitMs":20000');
      const sessionId = String(created.structuredContent!.sessionId);
      await readUntil(client, sessionId, (r) => r.state === "idle");
      const sent = await execute(client, "remote-session:send", { sessionId, prompt: "and now" });
      visible(sent, '"next":{"name":"remote-session:read"', '"cursor":"');
      const read = await execute(client, "remote-session:read", {
        sessionId,
        waitMs: 10_000,
        cursor: (sent.structuredContent!.next as { body: { cursor: string } }).body.cursor,
      });
      visible(read, '"finalAssistantText":"echo: and now"', '"next":{"name":"remote-session:send"');
      const failed = await execute(client, "remote-session:read", { sessionId: "rs_00000000000000000000000000" });
      visible(failed, '"error":"unknown_session"', '"message"', '"referenceId"');
    });

    it("lets an agent that only follows `next` do create → reply → send → reply on both targets, seeing each reply exactly once", async () => {
      const client = await connect(alice);
      for (const target of ["desktop", "cloud"]) {
        const replies: string[] = [];
        let result = await ok(client, "remote-session:create", { target, prompt: `first ${target} task` });
        // The agent: take the result's `next` and call it, as a model that reads only the payload would.
        const follow = async () => {
          const before = replies.length;
          for (let step = 0; step < 40; step++) {
            const next = result.next as { name: string; body: Record<string, unknown> };
            expect(next.name).toBe("remote-session:read");
            result = await ok(client, next.name, next.body);
            if (typeof result.finalAssistantText === "string") replies.push(result.finalAssistantText);
            if (result.state === "idle" && replies.length > before && (result.next as { name: string }).name === "remote-session:send") return;
          }
          throw new Error(`no reply on ${target}`);
        };
        await follow();
        const send = result.next as { name: string; body: Record<string, unknown> };
        result = await ok(client, send.name, { ...send.body, prompt: `second ${target} task` });
        await follow();
        expect(replies).toEqual([`echo: first ${target} task`, `echo: second ${target} task`]);
        // Stop answers in one shape whatever the target: nothing ran, the session is idle, prompt it next.
        expect(await ok(client, "remote-session:stop", { sessionId: result.sessionId })).toEqual({
          sessionId: result.sessionId,
          target,
          stopped: false,
          state: "idle",
          next: { name: "remote-session:send", body: { sessionId: result.sessionId, prompt: "<your next message>" } },
        });
      }
    });

    it("lets a scripted agent that starts with only the skill and the two tools hand work to the cloud worker and to a desktop", async () => {
      const client = await connect(alice);
      // It finds the skill as a model would, and takes its text: den-api's skill payload, one text part.
      const found = await call(client, "search_capabilities", { query: "how do I hand work to my desktop" });
      const [first] = found.structuredContent!.matches as { name: string; kind: string }[];
      expect(first).toMatchObject({ name: "skill:remote-sessions", kind: "skill" });
      const taught = (await client.callTool({ name: "execute_capability", arguments: { name: first!.name } })) as { content: { text: string }[] };
      const skill = (JSON.parse(taught.content[0]!.text) as { content: string }).content;

      for (const [request, target] of [
        ["send this to my web chat: write a haiku about tides", "cloud"],
        ["run this on my desktop and tell me when it's done: list my files", "desktop"],
      ] as const) {
        const outcome = await handOff(skill, request, (name, body) => ok(client, name, body));
        expect(outcome.created).toMatchObject({ target, sessionId: expect.stringMatching(/^rs_/) });
        expect(outcome.final).toMatchObject({ state: "idle", finalAssistantText: `echo: ${request.split(": ")[1]}` });
        // It followed the skill: one create, then only the reads each answer named.
        expect(outcome.calls[0]).toBe("remote-session:create");
        expect(new Set(outcome.calls.slice(1))).toEqual(new Set(["remote-session:read"]));
      }
    });

    it("drives a cloud session, and retries through a sleeping worker", async () => {
      const client = await connect(alice);
      const created = await ok(client, "remote-session:create", { target: "cloud", title: "E2E cloud", prompt: "hello cloud" });
      expect(created.webUrl).toMatch(/^https:\/\/web\.openwork\.test\/w\/ws_witness\/s\/ses_/);
      const read = await readUntil(client, String(created.sessionId), (r) => r.state === "idle");
      expect(read.finalAssistantText ?? (await ok(client, "remote-session:read", { sessionId: created.sessionId })).finalAssistantText).toBe(
        "echo: hello cloud",
      );

      await witness.sleep();
      const waking = await execute(client, "remote-session:create", { target: "cloud", prompt: "wake up", idempotencyKey: "wake-1" });
      expect(waking.structuredContent).toMatchObject({ error: "cloud_runtime_waking", retryable: true, retryAfterMs: expect.any(Number) });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const retried = await ok(client, "remote-session:create", { target: "cloud", prompt: "wake up", idempotencyKey: "wake-1" });
      const again = await ok(client, "remote-session:create", { target: "cloud", prompt: "wake up", idempotencyKey: "wake-1" });
      expect(again.sessionId).toBe(retried.sessionId);
    });

    it("enforces policy: write scope, the live cloud flag, and other members' sessions", async () => {
      const aliceClient = await connect(alice);
      const cloudSession = await ok(aliceClient, "remote-session:create", { target: "cloud", prompt: "mine" });
      const readerClient = await connect(reader);
      expect((await execute(readerClient, "remote-session:create", { target: "desktop" })).structuredContent).toMatchObject({
        error: "insufficient_mcp_scope",
      });
      expect((await execute(readerClient, "remote-session:list", {})).isError).toBeUndefined();
      const bobClient = await connect(bob);
      expect((await execute(bobClient, "remote-session:read", { sessionId: cloudSession.sessionId })).structuredContent).toMatchObject({
        error: "unknown_session",
      });
      expect((await execute(bobClient, "remote-session:send", { sessionId: cloudSession.sessionId, prompt: "hi" })).structuredContent).toMatchObject({
        error: "unknown_session",
      });

      cloudOrganizations.delete(ORG);
      try {
        expect((await execute(aliceClient, "remote-session:read", { sessionId: cloudSession.sessionId })).structuredContent).toMatchObject({
          error: "cloud_not_available",
        });
        expect((await execute(aliceClient, "remote-session:create", { target: "cloud" })).structuredContent).toMatchObject({ error: "cloud_not_available" });
        const search = await call(aliceClient, "search_capabilities", { query: "create remote session" });
        const create = (
          search.structuredContent!.matches as { name: string; argumentsSchema: { properties: { target: { enum: string[]; default: string } } } }[]
        ).find((m) => m.name === "remote-session:create")!;
        // The advertised default is the real one: a create without target goes to the desktop.
        expect(create.argumentsSchema.properties.target).toMatchObject({ enum: ["desktop"], default: "desktop" });
        expect((await execute(aliceClient, "remote-session:create", { title: "no target named" })).structuredContent).toMatchObject({
          target: "desktop",
          state: "queued",
        });
        // A running turn can still be stopped with cloud off.
        expect((await execute(aliceClient, "remote-session:stop", { sessionId: cloudSession.sessionId })).isError).toBeUndefined();
      } finally {
        cloudOrganizations.add(ORG);
      }
      expect((await execute(aliceClient, "remote-session:bogus", {})).structuredContent).toMatchObject({ error: "unknown_capability" });
      expect((await execute(aliceClient, "remote-session:read", { sessionId: 42 })).structuredContent).toMatchObject({
        error: "invalid_capability_arguments",
        issues: [expect.objectContaining({ path: "sessionId" })],
      });
    });

    it("refuses requests without a valid token with 401 and points at the protected-resource metadata", async () => {
      const response = await fetch(gateway.mcpUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(response.status).toBe(401);
      const challenge = response.headers.get("www-authenticate") ?? "";
      expect(challenge).toContain("resource_metadata=");
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
      const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({ resource: gateway.mcpUrl });
      // No authorization server is advertised: the gateway serves none, so clients report the token, not an OAuth failure.
      expect(metadata.authorization_servers).toBeUndefined();
      const wrong = await fetch(gateway.mcpUrl, {
        method: "POST",
        headers: { authorization: "Bearer not-a-token-of-ours", "content-type": "application/json" },
        body: "{}",
      });
      expect(wrong.headers.get("www-authenticate")).toContain("this token is not valid for this gateway");
      // A runner token is no MCP token, and an MCP token is no member credential for the runner routes.
      const mint = await fetch(`${gateway.baseUrl}/v1/desktop-runner/token`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.mcpToken}`, "content-type": "application/json" },
        body: JSON.stringify({ runnerId: "runner-x-000001", name: "x", platform: "linux", appVersion: "1", protocolVersion: 1 }),
      });
      expect(mint.status).toBe(401);
      const minted = await fetch(`${gateway.baseUrl}/v1/desktop-runner/token`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json" },
        body: JSON.stringify({ runnerId: "runner-x-000001", name: "x", platform: "linux", appVersion: "1", protocolVersion: 1 }),
      });
      const { token: runnerToken } = (await minted.json()) as { token: string };
      const asMcp = await fetch(gateway.mcpUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${runnerToken}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(asMcp.status).toBe(401);
      const sessionAsMcp = await fetch(gateway.mcpUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.sessionToken}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(sessionAsMcp.status).toBe(401);
    });

    it("ends in interrupted, with earlier events readable, when the desktop runner is killed mid-turn", async () => {
      const client = await connect(alice);
      const created = await ok(client, "remote-session:create", { target: "desktop", prompt: "SLOW a b c d e f g h" });
      const sessionId = String(created.sessionId);
      await readUntil(client, sessionId, (r) => typeof r.partialText === "string" && (r.partialText as string).length > 0);
      runner!.kill("SIGKILL");
      const killedAt = Date.now();
      const interrupted = await readUntil(client, sessionId, (r) => r.state === "interrupted", 10_000);
      expect(Date.now() - killedAt).toBeLessThan(3_000 + 2_000);
      const texts = (interrupted.messages as { role: string; text: string | null }[]).filter((m) => m.role === "assistant").map((m) => m.text);
      expect(texts.join("")).toContain("echo:");

      // Its stream closed with it: it is offline at once, not for the rest of the presence window.
      const targets = await ok(client, "remote-session:targets", {});
      expect(JSON.stringify(targets)).not.toMatch(/"name":"E2E Desktop"[^}]*"online":true/);
      // A new runner process (same install, restarted) is online again once connected, and picks up new work.
      runner = startRunnerProcess();
      const deadline = Date.now() + 15_000;
      while (gateway.hub.stats().runnerStreams < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const next = await ok(client, "remote-session:create", { target: "desktop", prompt: "after the crash" });
      const done = await readUntil(client, String(next.sessionId), (r) => r.state === "idle", 20_000);
      expect(done.state).toBe("idle");
    });
  });
}
