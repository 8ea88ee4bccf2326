import { request as httpRequest } from "node:http";
import { RUNNER_ROUTE_PREFIX } from "@openwork/runner-protocol/internal";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// Every route that reads a body stops at its limit, whoever sends it: a chunked body (no length
// to refuse up front) far past the limit is answered 413 while the sender is still held back by
// TCP, never read whole. Reading it whole would let the sender write all of it.
const db = useTestDatabase();
const member = fixedDevMember("bodies");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member);
}, 60_000);
afterAll(() => test?.close());

const SENT_BYTES = 128 * 1024 * 1024;

/**
 * POSTs SENT_BYTES chunked (as fast as the socket takes them) and resolves with the status the
 * gateway answered and how many bytes the sender got to write before the connection ended.
 */
function flood(path: string, headers: Record<string, string>): Promise<{ status: number; written: number; connection: string | undefined }> {
  const url = new URL(path, test.gateway.baseUrl);
  return new Promise((resolve, reject) => {
    let written = 0;
    let answer: { status: number; connection: string | undefined } | null = null;
    const chunk = Buffer.alloc(64 * 1024, "a");
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } }, (res) => {
      answer = { status: res.statusCode!, connection: res.headers.connection };
      res.resume();
    });
    // The gateway closes the connection with its answer: the sender's next write fails.
    req.on("error", () => {});
    req.on("close", () => (answer ? resolve({ ...answer, written }) : reject(new Error(`${path}: closed with no answer after ${written} bytes`))));
    const pump = () => {
      while (written < SENT_BYTES && !req.destroyed) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

it.each([
  ["an answer link's page, with no valid link", "/notify/answer/not-a-link", { "content-type": "application/x-www-form-urlencoded" }],
  ["the member's notification channels", "/member/notify/channels", { ...bearer(member.sessionToken), "content-type": "application/json" }],
  ["the MCP endpoint", "/mcp/agent", { ...bearer(member.mcpToken), "content-type": "application/json", accept: "application/json, text/event-stream" }],
  ["a runner token's mint", `${RUNNER_ROUTE_PREFIX}/token`, { ...bearer(member.sessionToken), "content-type": "application/json" }],
  ["OpenWork's runner mint", "/v1/session-runners/token", { ...bearer(member.sessionToken), "content-type": "application/json" }],
] as const)("%s stops reading a chunked body at its limit: 413, the connection closed", async (_, path, headers) => {
  const { status, written, connection } = await flood(path, headers);
  expect(status).toBe(413);
  expect(connection).toBe("close");
  // The limits are 64 KiB to 1 MiB; what is past them is what the kernels' buffers take.
  expect(written).toBeLessThan(SENT_BYTES / 4);
});

it("still answers an ordinary MCP call after the floods", async () => {
  const result = await test.execute("remote-session:list", {});
  expect(result.isError).toBeUndefined();
});
