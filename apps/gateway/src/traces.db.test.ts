import { context, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { createEchoEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { openworkMintRequest, QUICK_OPENWORK_PHASES, startOpenworkDesktopDouble } from "@openwork/desktop-target/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// One trace follows a prompt: the capability call that queued it, the desktop's claim (on the
// gateway, from the task's stored trace context), and the runner's events and completion (their
// `traceparent` header, the assignment's, sent back by the runner).
const db = useTestDatabase();
const member = fixedDevMember("traced");
const spans = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();
let test: Awaited<ReturnType<typeof startTestGateway>>;
let runner: Awaited<ReturnType<typeof startDesktopRunner>>;

beforeAll(async () => {
  context.setGlobalContextManager(contextManager.enable());
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  test = await startTestGateway(db.current.url, member, { tracerProvider });
  runner = await startDesktopRunner({
    gatewayUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    runnerId: "traced-desktop-0001",
    name: "Traced desktop",
    engine: createEchoEngine(),
  });
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await test?.close();
  context.disable();
});

const named = (name: string) => spans.getFinishedSpans().filter((span) => span.name === name);

/** Creates a desktop session, reads it until idle, and answers the create's span and a filter for its trace. */
async function tracedTurn(title: string) {
  const created = await test.execute("remote-session:create", { target: "desktop", title, prompt: "trace this" });
  expect(created.isError).toBeUndefined();
  const sessionId = created.structuredContent.sessionId as string;
  let state = "";
  for (let i = 0; i < 40 && state !== "idle"; i++) {
    state = (await test.execute("remote-session:read", { sessionId, waitMs: 1_000 })).structuredContent.state as string;
  }
  expect(state).toBe("idle");
  const [call] = named("remote-session:create").filter((span) => span.attributes["openwork.session_id"] === sessionId);
  expect(call).toBeDefined();
  const { traceId } = call!.spanContext();
  return { call: call!, inTrace: (span: ReadableSpan) => span.spanContext().traceId === traceId };
}

it("follows a desktop prompt from the MCP call through the claim, the runner's events and its completion in one trace", async () => {
  const { call, inTrace } = await tracedTurn("traced");
  const [claim] = named("desktop claim").filter(inTrace);
  expect(claim?.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  expect(claim?.attributes).toMatchObject({ "openwork.task_kind": "remote_session.create", "openwork.attempt": 1 });
  expect(named("desktop events").filter(inTrace).length).toBeGreaterThanOrEqual(1);
  expect(named("desktop complete").filter(inTrace)).toHaveLength(1);
  // Spans name capabilities, tasks and sessions: never what the prompt said.
  expect(JSON.stringify(spans.getFinishedSpans().map((span) => span.attributes))).not.toContain("trace this");
});

it("leaves a task untraced when nobody records: no trace context is stored or handed out", async () => {
  context.disable();
  try {
    const created = await test.execute("remote-session:create", { target: "desktop", title: "untraced", prompt: "no trace" });
    const [row] = await test.sql<{ trace_parent: string | null }[]>`
      select trace_parent from desktop_task where session_id = ${created.structuredContent.sessionId as string}`;
    expect(row?.trace_parent).toBeNull();
  } finally {
    context.setGlobalContextManager(contextManager.enable());
  }
});

it("follows a prompt on an OpenWork desktop too, from the task's stored trace context (its wire has no traceparent)", async () => {
  await runner.stop();
  const desktop = await startOpenworkDesktopDouble({
    baseUrl: `${test.gateway.baseUrl}/api/den`,
    memberToken: member.sessionToken,
    runnerId: "traced-openwork-install",
    ...QUICK_OPENWORK_PHASES,
  });
  try {
    const { call, inTrace } = await tracedTurn("traced on OpenWork");
    const [claim] = named("desktop claim").filter(inTrace);
    expect(claim?.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(claim?.attributes).toMatchObject({ "openwork.task_kind": "remote_session.create", "openwork.dialect": "openwork" });
    expect(named("desktop complete").filter(inTrace)).toHaveLength(1);
    expect(named("desktop progress").filter(inTrace).length).toBeGreaterThanOrEqual(1);

    // A completion the gateway refuses (the command was completed otherwise) is a failed step of the same trace.
    const base = `${test.gateway.baseUrl}/api/den`;
    const post = (path: string, token: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const minted = await post("/v1/automation-runners/token", member.sessionToken, openworkMintRequest("traced-openwork-install"));
    const { token } = (await minted.json()) as { token: string };
    const [command] = await test.sql<{ id: string }[]>`
      select id from desktop_task where kind = 'remote_session.create' and trace_parent like ${`00-${call.spanContext().traceId}-%`}`;
    const refused = await post(`/v1/remote-session-commands/${command!.id}/complete`, token, {
      status: "failed",
      error: { code: "late", message: "too late" },
    });
    expect(refused.status).toBe(409);
    const failed = named("desktop complete")
      .filter(inTrace)
      .filter((span) => span.status.code === SpanStatusCode.ERROR);
    expect(failed.map((span) => span.status.message)).toEqual(["command_complete_conflict"]);
  } finally {
    await desktop.stop();
  }
});
