import { fixedDevMember } from "@openwork/gateway";
import { startR0Double } from "@openwork/desktop-target/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAutomationRuns } from "../fixtures/den-api/src/automations.js";
import { startKindGateway, until } from "./kind-gateway.js";

// The rollout: den-api's Automations reach desktops still on OpenWork's channel (the released
// automation-only R0, through this gateway's OpenWork paths and den-api's own run routes) and new
// desktops on one loop (the work kind), from one table: every run claimed once, by either door.
const db = useTestDatabase();
const member = fixedDevMember("rollout", ["mcp:write"]);
const cleanups: (() => unknown)[] = [];
let env: Awaited<ReturnType<typeof startKindGateway>>;

beforeAll(async () => {
  env = await startKindGateway(db.current.url, [member], cleanups);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const runsOf = () => listAutomationRuns(env.sql, member);

async function startR0(runnerId: string) {
  const r0 = await startR0Double({ baseUrl: `${env.gateway.baseUrl}/api/den`, memberToken: member.sessionToken, runnerId, refreshMs: 600_000 });
  cleanups.push(() => r0.stop());
  await until(
    "the R0 desktop never opened its stream",
    () => r0.requests.some((r) => r.startsWith("GET /v1/automation-runners/events")),
    () => r0.requests.join("\n"),
  );
  return r0;
}

describe("den-api's Automations during the rollout", () => {
  it("an old automation-only desktop is woken for a run, claims it through OpenWork's paths and completes it in den-api's table", async () => {
    const r0 = await startR0("r0-install-0001");
    // Its stream is open: what wakes it is the run's hint, not a reconnect.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const runId = await env.scheduleRun("tidy the downloads folder");
    await until(
      "the R0 desktop never completed the run",
      () => r0.completedRuns.includes(runId),
      () => r0.requests.join("\n"),
    );

    const run = (await runsOf()).find((r) => r.id === runId);
    expect(run).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
      lease_owner: `desktop:${member.memberId}:r0-install-0001`,
      result_summary: "R0 ran: tidy the downloads folder",
    });
    const events = await env.sql`select type from automation_run_event where run_id = ${runId} order by sequence`;
    expect(events.map((e) => e.type)).toEqual(["user", "assistant", "usage", "terminal"]);
    await r0.stop();
  });

  it("with an old and a new desktop online, each run is claimed once, by whichever door asks first", async () => {
    const r0 = await startR0("r0-install-0002");
    const { runner, ended } = await env.startDesktop(member, "new-desktop-0001", {
      handlers: {},
      workHandlers: { "automation.run": async (run) => ({ status: "done", result: { summary: `new desktop ran ${String(run.input.instructions)}` } }) },
    });
    await until(
      "the new desktop never opened its stream",
      () => env.gateway.hub.stats().runnerStreams >= 2,
      () => "",
    );

    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await env.scheduleRun(`run ${i}`));
    await until(
      "not every run ended",
      async () => (await runsOf()).filter((r) => ids.includes(r.id)).every((r) => r.status === "succeeded"),
      () => r0.requests.join("\n"),
    );
    const runs = (await runsOf()).filter((r) => ids.includes(r.id));
    expect(runs.every((r) => r.attempt_count === 1)).toBe(true);
    // Each run was done by one door: the old desktop (which may run a claim it already holds twice,
    // as OpenWork's claim is idempotent for its holder) or the new one, never both.
    const byNew = new Set(ended.filter((o) => o.status === "done").map((o) => o.taskId));
    const byOld = new Set(r0.completedRuns.filter((id) => ids.includes(id)));
    expect([...byNew].filter((id) => byOld.has(id))).toEqual([]);
    expect([...byNew, ...byOld].sort()).toEqual([...ids].sort());
    for (const run of runs) {
      const owner = byNew.has(run.id) ? "new-desktop-0001" : "r0-install-0002";
      expect(run.lease_owner).toBe(`desktop:${member.memberId}:${owner}`);
    }
    await runner.stop();
    await r0.stop();
  });

  it("a session-only OpenWork desktop sees no runs in its work", async () => {
    const mintAs = (path: string, capabilities: string[]) =>
      fetch(`${env.gateway.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${member.sessionToken}`, "content-type": "application/json" },
        body: JSON.stringify({
          runnerId: `session-only-${capabilities.length}`,
          protocolVersion: 1,
          supportedExecutionTargets: ["desktop"],
          capabilities,
          appVersion: "0.19.0",
          platform: "darwin",
          concurrency: 1,
        }),
      }).then(async (r) => ((await r.json()) as { token: string }).token);
    const runId = await env.scheduleRun("not for a session runner");
    const token = await mintAs("/v1/automation-runners/token", ["remote_session_v1", "remote_session_only_v1"]);
    const work = await fetch(`${env.gateway.baseUrl}/v1/automation-runner/work`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await work.json()) as { items: { runId?: string }[] }).items.some((item) => item.runId === runId)).toBe(false);
    expect((await runsOf()).find((r) => r.id === runId)).toMatchObject({ status: "queued" });
  });
});
