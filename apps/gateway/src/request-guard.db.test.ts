import { request } from "node:http";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const member = fixedDevMember("guard");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member, { allowedOrigins: ["https://app.openwork.test"] });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

/** A tools/list POST with a valid token and the given Origin and Host headers (node:http, so Host can be set). */
function listTools(headers: Record<string, string>): Promise<number> {
  const url = new URL(test.gateway.mcpUrl);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${member.mcpToken}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

it("refuses browser requests from other origins and requests addressed to another host (DNS rebinding), with a valid token", async () => {
  const own = new URL(test.gateway.baseUrl);
  expect(await listTools({ host: own.host })).toBe(200);
  expect(await listTools({ host: own.host, origin: own.origin })).toBe(200);
  expect(await listTools({ host: own.host, origin: "https://app.openwork.test" })).toBe(200);
  expect(await listTools({ host: `localhost:${own.port}` })).toBe(200);
  expect(await listTools({ host: own.host, origin: "https://evil.example" })).toBe(403);
  expect(await listTools({ host: "evil.example" })).toBe(403);
  expect(await listTools({ host: `evil.example:${own.port}`, origin: "https://evil.example" })).toBe(403);
  // The member routes are guarded the same way.
  const presence = await fetch(`${test.gateway.baseUrl}/v1/desktop-runner/presence`, {
    headers: { origin: "https://evil.example", authorization: `Bearer ${member.sessionToken}` },
  });
  expect(presence.status).toBe(403);
});
