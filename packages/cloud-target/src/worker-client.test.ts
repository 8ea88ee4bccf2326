import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SessionFailure } from "@openwork/remote-session-core";
import { afterEach, expect, it } from "vitest";
import { createWorkerClient } from "./worker-client.js";

const answering = (status: number, body: unknown) =>
  createWorkerClient({ workerId: "w1", url: "http://worker.test", clientToken: "c" }, { fetch: async () => Response.json(body, { status }) });
const errorOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);

it("maps the worker's refusals to what the caller can act on", async () => {
  // A refused credential: not a missing session, and a person knows what to do.
  expect(await answering(401, { code: "unauthorized", message: "Invalid bearer token" }).workspaces().catch(errorOf)).toMatchObject({
    error: "cloud_runtime_failed",
    action: expect.stringContaining("Reconnect OpenWork Cloud"),
  });
  expect(await answering(404, { code: "workspace_not_found", message: "Workspace not found" }).status("ws_x").catch(errorOf)).toMatchObject({
    error: "unknown_workspace",
  });
  expect(
    await answering(404, { name: "NotFoundError", data: { message: "Session not found: ses_x" } })
      .messages("ws_1", "ses_x")
      .catch(errorOf),
  ).toMatchObject({
    error: "unknown_session",
  });
  expect(await answering(500, { code: "internal_error", message: "engine down" }).status("ws_1").catch(errorOf)).toMatchObject({
    error: "cloud_runtime_unreachable",
    retryable: true,
  });
});

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A real worker on 127.0.0.1 answering each request in turn; when each arrived. */
async function worker(answer: (n: number, response: ServerResponse) => void) {
  const arrivals: number[] = [];
  const server = createServer((_request, response) => answer(arrivals.push(Date.now()), response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  const client = createWorkerClient({ workerId: "w1", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clientToken: "c" });
  return { client, arrivals };
}
const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
};

it("reads again once the HTTP date a 503's Retry-After names has come", async () => {
  let until = 0;
  const { client, arrivals } = await worker((n, response) => {
    if (n > 1) return json(response, 200, []);
    // An HTTP date has whole seconds: two seconds ahead is at least one second away.
    const date = new Date(Date.now() + 2_000).toUTCString();
    until = Date.parse(date);
    json(response, 503, { code: "unavailable", message: "restarting" }, { "retry-after": date });
  });
  expect(await client.messages("ws_1", "ses_1")).toEqual([]);
  expect(arrivals).toHaveLength(2);
  // Node may fire a timer a millisecond early, and Date.now() rounds.
  expect(arrivals[1]).toBeGreaterThanOrEqual(until - 5);
});

it("never sends a write twice: a prompt answered 503 fails at once, retryable by the caller", async () => {
  const { client, arrivals } = await worker((_n, response) => json(response, 503, { code: "unavailable" }, { "retry-after": "1" }));
  const failure = await client.promptAsync("ws_1", "ses_1", { text: "hi", messageID: "msg_1" }).catch(errorOf);
  expect(failure).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true });
  expect(arrivals).toHaveLength(1);
});

it("answers how the engine holds a registered MCP entry, a failed connect included", async () => {
  const statuses = { "ows-rs_a": { status: "connected" }, "ows-rs_b": { status: "failed", error: "SSE error: refused" } };
  expect(await answering(200, statuses).putMcpEntry("ws_1", "ows-rs_b", { url: "http://gw.test/mcp", authorization: "Bearer x" })).toEqual({
    status: "failed",
    error: "SSE error: refused",
  });
  expect(await answering(200, statuses).putMcpEntry("ws_1", "ows-rs_a", { url: "http://gw.test/mcp", authorization: "Bearer x" })).toEqual({
    status: "connected",
  });
});

it("carries the active span's trace context to the worker as traceparent, and nothing without one", async () => {
  const seen: (string | null)[] = [];
  const client = createWorkerClient(
    { workerId: "w1", url: "http://worker.test", clientToken: "c" },
    {
      fetch: async (input, init) => {
        seen.push(new Request(input, init).headers.get("traceparent"));
        return Response.json({ items: [] });
      },
    },
  );
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  try {
    const span = trace.wrapSpanContext({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 });
    await context.with(trace.setSpan(context.active(), span), () => client.workspaces());
    await client.workspaces();
  } finally {
    context.disable();
  }
  expect(seen).toEqual(["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", null]);
});
