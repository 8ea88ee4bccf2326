import { verifyRunnerToken } from "@openwork/runner-protocol/server";
import { useTestDatabase } from "@openwork/test-postgres";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

// An unmodified OpenWork desktop uses `<origin>/api/den` as its base URL: the gateway serves
// OpenWork's channel there too, and names audiences as den-api does behind its trusted proxy.
const db = useTestDatabase();
const member: DevMember = fixedDevMember("den-base");
const SECRET = "den-base-runner-secret-0123456789abcdef";
const PROXY = "https://app.openwork.test";
let gateway: Awaited<ReturnType<typeof serveGateway>>;
let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  gateway = await serveGateway({ sql, port: 0, members: () => [member], cloudEnabled: () => false, runnerTokenSecret: SECRET, trustedProxyOrigins: [PROXY] });
});
afterAll(async () => {
  await gateway?.close();
  await sql?.end({ timeout: 5 });
});

const mint = async (path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({
      runnerId: "den-base-install-1",
      protocolVersion: 1,
      supportedExecutionTargets: ["desktop"],
      capabilities: ["model_attention_v1", "remote_session_v1"],
      appVersion: "0.19.0",
      platform: "darwin",
      concurrency: 1,
    }),
  });
  expect(response.status).toBe(200);
  const { token } = (await response.json()) as { token: string };
  return verifyRunnerToken(token, { secret: SECRET });
};

it("mints under /api/den with the audience a desktop there expects, and through a trusted proxy as den-api derives it", async () => {
  expect(await mint("/api/den/v1/automation-runners/token")).toMatchObject({ ok: true, claims: { a: `${gateway.baseUrl}/api/den` } });
  const forwarded = { "x-forwarded-prefix": "/api/den", "x-forwarded-host": "app.openwork.test", "x-forwarded-proto": "https" };
  expect(await mint("/v1/automation-runners/token", forwarded)).toMatchObject({ claims: { a: `${PROXY}/api/den` } });
  // An untrusted forwarded host is not believed: the direct entry point.
  expect(await mint("/v1/automation-runners/token", { "x-forwarded-prefix": "/api/den", "x-forwarded-host": "evil.test" })).toMatchObject({
    claims: { a: gateway.baseUrl },
  });
});

it("answers every OpenWork route family, at the root and under /api/den, with JSON — never a plain-text 404", async () => {
  for (const base of ["", "/api/den"]) {
    for (const family of [
      "automation-runners",
      "automation-runner",
      "automation-runs",
      "remote-session-commands",
      "remote-session-requests",
      "session-runners",
    ]) {
      const response = await fetch(`${gateway.baseUrl}${base}/v1/${family}/no-such-route`);
      expect([`${base}/v1/${family}`, response.status, response.headers.get("content-type")]).toEqual([`${base}/v1/${family}`, 404, "application/json"]);
    }
  }
});
