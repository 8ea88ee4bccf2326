import { type DevMember, memberContext, serveGateway } from "@openwork/gateway";
import { parseName } from "@openwork/mcp-capability";
import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken, type RunRunnerOptions, runRunner, type TaskOutcome } from "@openwork/runner-protocol/client";
import postgres from "postgres";
import { openworkAutomationRoutes } from "../fixtures/den-api/src/automation-routes.js";
import { automationRuns, migrateAutomations, queueAutomationRun } from "../fixtures/den-api/src/automations.js";

const SECRET = "bundle-runner-secret-0123456789abcdef";

/**
 * The reference gateway with den-api's Automations (the den-api fixture's, in their own table) as
 * a work kind on its runner channel, short leases and sweeps; what it holds is closed by `cleanups`.
 */
export async function startKindGateway(databaseUrl: string, members: DevMember[], cleanups: (() => unknown)[], kind: { maxAttempts?: number } = {}) {
  const sql = postgres(databaseUrl, { max: 10, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
  await migrateAutomations(sql);
  const gateway = await serveGateway({
    sql,
    members: () => members,
    cloudEnabled: () => false,
    runnerTokenSecret: SECRET,
    port: 0,
    workKinds: [automationRuns(sql, kind)],
    // The same runs for desktops still on OpenWork's channel, through den-api's own run routes.
    openworkRuns: openworkAutomationRoutes(sql, { secret: SECRET, leaseMs: 1_500 }),
    timings: { leaseMs: 1_500, heartbeatIntervalMs: 300, sweepIntervalMs: 200 },
  });
  cleanups.push(() => gateway.close());
  const [first] = members;
  const execute = (name: string, body: Record<string, unknown>, member = first!) => gateway.source.execute(memberContext(member), parseName(name)!, { body });
  /** Queues an Automation run in den-api's table, then tells the member's runners. */
  const scheduleRun = async (instructions: string, member = first!) => {
    const taskId = await queueAutomationRun(sql, member, { name: "test automation", instructions });
    await gateway.host.desktop.announceWork({ taskId, organizationId: member.organizationId, memberId: member.memberId });
    return taskId;
  };
  /** Registers a desktop of `member` on this gateway's protocol (`protocolVersion` at its mint). */
  const mint = (member: DevMember, runnerId: string, protocolVersion = RUNNER_PROTOCOL_VERSION) =>
    requestRunnerToken({
      baseUrl: gateway.baseUrl,
      memberToken: member.sessionToken,
      request: { runnerId, name: runnerId, platform: "linux", appVersion: "2.0.0", protocolVersion, capabilities: [...RUNNER_CAPABILITIES] },
    });
  /** A desktop running one `runRunner` loop with these handlers; `ended` holds how its tasks ended. Stopped by `cleanups`. */
  const startDesktop = async (
    member: DevMember,
    runnerId: string,
    loop: Omit<RunRunnerOptions, "client" | "gatewayProtocolVersion" | "onTaskEnd">,
    protocolVersion = RUNNER_PROTOCOL_VERSION,
  ) => {
    const minted = await mint(member, runnerId, protocolVersion);
    const ended: TaskOutcome[] = [];
    const client = createRunnerClient({ baseUrl: gateway.baseUrl, token: minted.token });
    const runner = runRunner({ ...loop, client, gatewayProtocolVersion: minted.protocolVersion, onTaskEnd: (outcome) => void ended.push(outcome) });
    cleanups.push(() => runner.stop());
    return { runner, ended, minted };
  };
  return { sql, gateway, execute, scheduleRun, mint, startDesktop };
}

/** Waits until `check` holds (20 s at most), then says what `output` shows. */
export async function until(what: string, check: () => boolean | Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
