// Gateway overhead: execute_capability(remote-session:read) beside a no-op tool on the same
// transport and server. Budget: p50 within 2× of the no-op.
import { z } from "zod";
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const CALLS = Number(process.env.CALLS ?? 500);
const db = await benchDatabase("overhead");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url, {
    configureMcp: (server) =>
      void server.registerTool("noop", { inputSchema: z.object({ name: z.string().optional() }) }, async () => ({ content: [{ type: "text", text: "ok" }] })),
  });
  const mcp = await fixture.mcpClient();
  // A desktop session with a finished turn to read (its task completed by a runner client).
  const runner = await fixture.runnerClient("bench-overhead-runner");
  const created = await fixture.execute("remote-session:create", { target: "desktop", title: "read me", prompt: "hello" });
  const sessionId = String(created.structuredContent?.sessionId);
  const [item] = (await runner.work()).items;
  const { attempt } = await runner.claim(item!.taskId);
  await runner.postEvents(item!.taskId, attempt, [
    { sequence: 1, type: "session.bound", payload: { localSessionId: "ses_bench" } },
    { sequence: 2, type: "assistant.final", payload: { messageId: "m1", text: "a reply of a few words" } },
  ]);
  await runner.complete(item!.taskId, { attempt, status: "done", localSessionId: "ses_bench" });

  const time = async (call: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < CALLS + 50; i++) {
      const t0 = performance.now();
      await call();
      if (i >= 50) samples.push(performance.now() - t0);
    }
    return summarize(samples);
  };
  // Interleaved rounds, so drift on a busy machine hits both alike.
  const noop = () => mcp.callTool({ name: "noop", arguments: {} });
  const read = () => mcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:read", body: { sessionId } } });
  const noopStats = await time(noop);
  const readStats = await time(read);
  rows["no-op tool (baseline)"] = { ...noopStats, unit: "ms" };
  rows["execute_capability(remote-session:read)"] = { ...readStats, unit: "ms", ratioP50: +(readStats.p50 / noopStats.p50).toFixed(2) };
  // The same read on the default endpoint (push on): the client keeps its Mcp-Session-Id, and
  // every request's session is checked in PostgreSQL.
  const stateful = await benchGateway(db.url);
  const mcpStateful = await stateful.mcpClient();
  const statefulStats = await time(() => mcpStateful.callTool({ name: "execute_capability", arguments: { name: "remote-session:read", body: { sessionId } } }));
  rows["execute_capability(remote-session:read), stateful MCP session (push on)"] = {
    ...statefulStats,
    unit: "ms",
    ratioP50: +(statefulStats.p50 / noopStats.p50).toFixed(2),
  };
  await mcpStateful.close();
  await stateful.close();
  await mcp.close();
  await fixture.close();
} finally {
  await db.stop();
}
await report("overhead", db.server, rows, [
  "Both over Streamable HTTP to the same gateway (stateless: a fresh McpServer and transport per request), one call at a time. The stateful line: a second gateway in the same process, on the default endpoint (push on), whose client sends the Mcp-Session-Id it was given; the session is checked on every request.",
  "read = ledger lookup + the session's tasks and events from Postgres + transcript; budget: p50 within 2× of the no-op.",
]);
process.exit(0);
