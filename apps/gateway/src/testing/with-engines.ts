import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { createEchoEngine, startDesktopRunner } from "@openwork/desktop-runner";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import type { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll } from "vitest";
import type { DevMember } from "../dev-members.js";
import { startTestGateway } from "./test-gateway.js";

/** A gateway whose cloud worker is a witness over `opencode` (a real one) or the echo engine, with an echo desktop for `member`. */
export function withEngines(db: ReturnType<typeof useTestDatabase>, member: DevMember, real: boolean) {
  const running: { test?: Awaited<ReturnType<typeof startTestGateway>>; opencode?: RealOpencode; witness?: RunningWitness } = {};
  let runner: Awaited<ReturnType<typeof startDesktopRunner>> | undefined;
  beforeAll(async () => {
    running.opencode = real ? await startRealOpencode() : undefined;
    running.witness = await startWitnessWorker({
      clientToken: "client-token-engines",
      hostToken: "host-token-engines",
      gatewayKey: "gateway-key-engines",
      ...(running.opencode ? { opencode: { url: running.opencode.url, directory: running.opencode.directory } } : { echo: { replyDelayMs: 20 } }),
    });
    running.test = await startTestGateway(db.current.url, member, {
      cloudEnabled: () => true,
      cloudResolver: createHttpWorkerResolver({ baseUrl: running.witness.resolverUrl, gatewayKey: "gateway-key-engines" }),
    });
    runner = await startDesktopRunner({
      gatewayUrl: running.test.gateway.baseUrl,
      memberToken: member.sessionToken,
      runnerId: `engines-desktop-${real ? "real" : "echo"}`,
      name: "Echo desktop",
      engine: createEchoEngine(),
    });
    while (running.test.gateway.hub.stats().runnerStreams < 1) await new Promise((resolve) => setTimeout(resolve, 50));
  }, 90_000);
  afterAll(async () => {
    await runner?.stop();
    await running.test?.close();
    await running.witness?.close();
    await running.opencode?.stop();
  });
  return running;
}
