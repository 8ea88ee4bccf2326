import { connect, type Socket } from "node:net";
import { requestRunnerToken, RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
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
    request: { runnerId: "runner-flood-0001", name: "Flood", platform: "linux", appVersion: "1", protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: [...RUNNER_CAPABILITIES] },
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

it("answers 503 past the connection cap, drops slow headers after the header timeout, and recovers", async () => {
  // Connections that never finish their headers.
  for (let i = 0; i < 150; i++) {
    const socket = connect(Number(new URL(test.gateway.baseUrl).port), "127.0.0.1");
    socket.on("error", () => {});
    socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    sockets.push(socket);
  }
  // A new connection (not one of the client's kept-alive ones) is refused at once, in words.
  const answer = await freshRequest("/health");
  expect(answer).toMatch(/^HTTP\/1\.1 503/);
  expect(answer).toContain('"error":"server_busy"');
  // The header timeout frees them: new connections are served again.
  await eventually(async () => ((await freshRequest("/health")).startsWith("HTTP/1.1 200") ? true : undefined), 10_000);
  const timings: number[] = [];
  await eventually(async () => {
    const ok = await test.execute("remote-session:list", {}).then(
      (r) => r.isError === undefined,
      () => false,
    );
    return ok ? true : undefined;
  }, 10_000);
  for (let i = 0; i < 20; i++) timings.push(await listMs());
  expect(p99(timings)).toBeLessThan(1_000);
});
