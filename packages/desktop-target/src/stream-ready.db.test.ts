import { createRunnerClient } from "@openwork/runner-protocol/client";
import { openWakeStream, type WakeEvent } from "@openwork/runner-protocol/internal";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterEach, describe, expect, it } from "vitest";
import type { HostWorkKind, WorkRunner } from "./host-work-kind.js";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
const gateways: RunnerGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
});

/** Opens a wake stream for the runner and returns the events it got once `count` came. */
/** Collects a stream's hints; keepalives (every second here) may come first on a busy machine and say nothing. */
const hintsInto = (events: WakeEvent[]) => (event: WakeEvent) => {
  if (event.type !== "keepalive") events.push(event);
};

async function firstEvents(gateway: RunnerGateway, token: string, count: number): Promise<WakeEvent[]> {
  const events: WakeEvent[] = [];
  const stream = openWakeStream({ client: createRunnerClient({ baseUrl: gateway.baseUrl, token }), onEvent: hintsInto(events) });
  try {
    await eventually(() => (events.length >= count ? true : undefined));
    return events;
  } finally {
    stream.close();
    await stream.closed;
  }
}

/** A host's kind whose tasks live elsewhere: only its `waiting` answer matters here. */
function hostKind(waiting?: (runner: WorkRunner) => Promise<boolean>): HostWorkKind {
  const refused = async () => ({ refused: "not_found" as const, message: "no such task" });
  return {
    kind: "automation.run",
    idPrefix: "arun_",
    claimNext: async () => null,
    heartbeat: refused,
    appendEvents: refused,
    complete: refused,
    ...(waiting ? { waiting } : {}),
  };
}

describe("the wake stream's opening tells a protocol-5 runner whether work waits", () => {
  it("says no work when none waits, then hints what is queued later; says work when a task waits at the opening", async () => {
    const gateway = await startRunnerGateway(db.current.url);
    gateways.push(gateway);
    const member = { organizationId: "org_ready", memberId: "mem_ready" };
    const token = await gateway.registerRunner(member, "runner-ready-01");
    const events: WakeEvent[] = [];
    const stream = openWakeStream({ client: createRunnerClient({ baseUrl: gateway.baseUrl, token }), onEvent: hintsInto(events) });
    await eventually(() => (events.length === 1 ? true : undefined));
    expect(events[0]).toEqual({ type: "remote_session_stream_ready", work: false });
    await gateway.sessions.create(gateway.call(member), { title: "later" });
    await eventually(() => (events.length === 2 ? true : undefined));
    expect(events[1]).toMatchObject({ type: "remote_session_work_available" });
    stream.close();
    await stream.closed;

    // The task is still queued: the next opening says so.
    expect((await firstEvents(gateway, token, 1))[0]).toEqual({ type: "remote_session_stream_ready", work: true });
    // Another runner of the member may take it too (it is pinned to none); another member's runner has nothing.
    const other = await gateway.registerRunner({ organizationId: "org_ready", memberId: "mem_other" }, "runner-ready-02");
    expect((await firstEvents(gateway, other, 1))[0]).toEqual({ type: "remote_session_stream_ready", work: false });
  });

  it("tells a runner of protocol 4 nothing (its opening looks for work, as before)", async () => {
    const gateway = await startRunnerGateway(db.current.url);
    gateways.push(gateway);
    const member = { organizationId: "org_ready", memberId: "mem_old" };
    const token = await gateway.registerRunner(member, "runner-ready-03", { protocolVersion: 4 });
    const events: WakeEvent[] = [];
    const stream = openWakeStream({ client: createRunnerClient({ baseUrl: gateway.baseUrl, token }), onEvent: hintsInto(events) });
    // The hint of a task made before the stream is up is not sent on it (the runner's opening looks for work instead).
    await eventually(() => (gateway.hub.stats().runnerStreams === 1 ? true : undefined));
    await gateway.sessions.create(gateway.call(member), { title: "one" });
    await eventually(() => (events.length === 1 ? true : undefined));
    expect(events[0]).toMatchObject({ type: "remote_session_work_available" });
    stream.close();
    await stream.closed;
    expect(events.some((event) => event.type === "remote_session_stream_ready")).toBe(false);
  });

  it("asks the host's kinds: one that cannot tell makes the answer yes, one that says none leaves it no", async () => {
    const asked: WorkRunner[] = [];
    const quiet = await startRunnerGateway(db.current.url, {
      workKinds: [hostKind(async (runner) => (asked.push(runner), false))],
    });
    gateways.push(quiet);
    const member = { organizationId: "org_ready", memberId: "mem_host" };
    expect((await firstEvents(quiet, await quiet.registerRunner(member, "runner-ready-04"), 1))[0]).toEqual({
      type: "remote_session_stream_ready",
      work: false,
    });
    expect(asked).toEqual([expect.objectContaining({ ...member, runnerId: "runner-ready-04" })]);

    const unknowing = await startRunnerGateway(db.current.url, { workKinds: [hostKind()] });
    gateways.push(unknowing);
    expect((await firstEvents(unknowing, await unknowing.registerRunner(member, "runner-ready-05"), 1))[0]).toEqual({
      type: "remote_session_stream_ready",
      work: true,
    });
  });

  it("says work when it cannot tell (the host's kind failed), and logs it", async () => {
    const gateway = await startRunnerGateway(db.current.url, {
      workKinds: [hostKind(async () => Promise.reject(new Error("the host's table is gone")))],
    });
    gateways.push(gateway);
    const token = await gateway.registerRunner({ organizationId: "org_ready", memberId: "mem_fail" }, "runner-ready-06");
    expect((await firstEvents(gateway, token, 1))[0]).toEqual({ type: "remote_session_stream_ready", work: true });
    expect(gateway.logger.lines.some((line) => line.startsWith("warn desktop runner: the stream's work check failed"))).toBe(true);
  });
});
