import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { afterEach, expect, it } from "vitest";
import { createEchoEngine } from "./echo-engine.js";
import { DesktopRevokedError, startDesktopRunner } from "./start-desktop-runner.js";

// A gateway on loopback whose owner revokes the desktop after its first mint: every runner route
// then refuses the token (401) and every mint answers 403 `runner_revoked`, as the desktop target does.
let close: (() => Promise<void>) | undefined;
afterEach(() => close?.());

async function revokingGateway(options: { revokedFromStart: boolean }) {
  const mints: number[] = [];
  const step = "this desktop was revoked by its owner; re-enable it, then start it again";
  const reply = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", () => {
      if (request.url?.endsWith("/token")) {
        mints.push(Date.now());
        if (options.revokedFromStart || mints.length > 1) return reply(response, 403, { error: "runner_revoked", message: step });
        return reply(response, 200, {
          token: "t".repeat(40),
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
          audience: url,
          protocolVersion: RUNNER_PROTOCOL_VERSION,
          capabilities: ["session_create_v1", "session_followup_v1"],
          eventsPath: "/v1/desktop-runner/events",
        });
      }
      reply(response, 401, { error: "runner_unauthorized", message: "runner token refused: runner not registered or revoked" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return { url, mints, step };
}

const options = (gatewayUrl: string, warnings: string[]) => ({
  gatewayUrl,
  memberToken: "member-session-token",
  runnerId: "runner-revoked-0001",
  name: "Revoked box",
  engine: createEchoEngine(),
  pollIntervalMs: 50,
  logger: { info: () => {}, warn: (message: string, fields?: Record<string, unknown>) => void warnings.push(`${message} ${JSON.stringify(fields ?? {})}`) },
});

it("stops for good when its desktop was revoked, saying what the person must do, instead of minting again and again", async () => {
  const gateway = await revokingGateway({ revokedFromStart: false });
  const warnings: string[] = [];
  const runner = await startDesktopRunner(options(gateway.url, warnings));
  const end = await runner.ended;
  expect(end).toEqual({ reason: "revoked", message: gateway.step });
  expect(warnings.some((w) => w.includes("this desktop was revoked; stopping") && w.includes("re-enable it"))).toBe(true);
  // One refused mint after the first: the stopped runner asks for nothing more.
  const requestsAtEnd = gateway.mints.length;
  runner.wake();
  await runner.stop();
  expect(requestsAtEnd).toBe(2);
  expect(gateway.mints).toHaveLength(2);
});

it("refuses to start on a revoked desktop with the person's step", async () => {
  const gateway = await revokingGateway({ revokedFromStart: true });
  const started = startDesktopRunner(options(gateway.url, []));
  await expect(started).rejects.toBeInstanceOf(DesktopRevokedError);
  await expect(started).rejects.toThrow(/re-enable it/);
});
