import { connect, type Socket } from "node:net";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { requestRunnerToken } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const attacker = fixedDevMember("flood");
const bystander = fixedDevMember("bystander");
let test: Awaited<ReturnType<typeof startTestGateway>>;
const sockets: Socket[] = [];

beforeAll(async () => {
  test = await startTestGateway(db.current.url, bystander, {
    members: () => [attacker, bystander],
    connectionLimits: { maxConnections: 120, headersTimeoutMs: 1_000 },
  });
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await test?.close();
});

/** The bystander's `list` round trip, in ms. */
async function listMs(): Promise<number> {
  const started = performance.now();
  const result = await test.execute("remote-session:list", {});
  expect(result.isError).toBeUndefined();
  return performance.now() - started;
}
/** A request on a connection of its own; resolves with the raw answer. */
function freshRequest(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(test.gateway.baseUrl).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}
const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(samples.length * 0.99) - 1]!;

it("keeps at most two streams per runner token (the newest win) while another member's list stays fast", async () => {
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: attacker.sessionToken,
    request: {
      runnerId: "runner-flood-0001",
      name: "Flood",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const streams: Response[] = [];
  const timings: number[] = [];
  for (let i = 0; i < 60; i++) {
    streams.push(await fetch(`${test.gateway.baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` } }));
    if (i % 5 === 0) timings.push(await listMs());
  }
  expect(test.gateway.hub.stats().runnerStreams).toBe(2);
  // The evicted streams were ended by the gateway, not left open.
  const first = streams[0]!.body!.getReader();
  expect(await eventually(async () => ((await first.read()).done ? true : undefined), 3_000)).toBe(true);
  for (const stream of streams) await stream.body?.cancel().catch(() => {});
  expect(p99(timings)).toBeLessThan(1_000);
});

/** `count` connections from the flooder, each sent `opening` (nothing for idle sockets). */
function flood(count: number, opening: string) {
  for (let i = 0; i < count; i++) {
    const socket = connect(Number(new URL(test.gateway.baseUrl).port), "127.0.0.1");
    socket.on("error", () => {});
    if (opening) socket.write(opening);
    sockets.push(socket);
  }
}
const ended = () => {
  for (const socket of sockets.splice(0)) socket.destroy();
};

it("at the connection cap, idle sockets and slow headers give their slots to another member's new connection, and the header timeout drops them", async () => {
  flood(80, "");
  flood(80, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  await eventually(() => (test.gateway.connections().open >= 120 ? true : undefined));
  // A new connection (not one of the client's kept-alive ones) takes the slot of the oldest
  // unfinished one, once that one has had a second to send its request.
  await eventually(async () => ((await freshRequest("/health")).startsWith("HTTP/1.1 200") ? true : undefined), 3_000);
  expect((await test.execute("remote-session:list", {})).isError).toBeUndefined();
  // The header timeout (1 s here) ends those that are left.
  await eventually(() => (test.gateway.connections().unidentified === 0 ? true : undefined), 5_000);
  ended();
});

it("at the connection cap, slow bodies sent with a valid token cost their credential's connections, not another member's", async () => {
  const slowBody = `POST /mcp/agent HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${attacker.mcpToken}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`;
  flood(160, slowBody);
  await eventually(() => (test.gateway.connections().open >= 120 && test.gateway.connections().unidentified === 0 ? true : undefined));
  expect(await freshRequest("/health")).toMatch(/^HTTP\/1\.1 200/);
  // The other member's calls are served all along (on a connection that may itself be new).
  for (let i = 0; i < 10; i++) await listMs();
  ended();
});
