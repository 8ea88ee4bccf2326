import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

const db = useTestDatabase();
const member = fixedDevMember("metrics");
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  test = await startTestGateway(db.current.url, member, { timings: { leaseMs: 600, heartbeatIntervalMs: 200, sweepIntervalMs: 100 } });
}, 60_000);

afterAll(async () => {
  await test?.close();
});

const scrape = async () => {
  const response = await fetch(`${test.gateway.baseUrl}/metrics`);
  expect(response.headers.get("content-type")).toContain("text/plain");
  const text = await response.text();
  return (name: string) => Number(new RegExp(`^${name.replace(/[{}"+]/g, (c) => `\\${c}`)} (\\S+)$`, "m").exec(text)?.[1]);
};

it("serves Prometheus metrics: queue depth, dispatch latency, lease losses, expirations and streams", async () => {
  const { token } = await requestRunnerToken({
    baseUrl: test.gateway.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId: "runner-metrics-01",
      name: "Metrics",
      platform: "linux",
      appVersion: "1",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  const runner = createRunnerClient({ baseUrl: test.gateway.baseUrl, token });
  await test.execute("remote-session:create", { target: "desktop", prompt: "one" });
  await test.execute("remote-session:create", { target: "desktop", prompt: "two", deliverBy: new Date(Date.now() + 300).toISOString() });
  let metric = await scrape();
  expect(metric('openwork_desktop_tasks{state="queued"}')).toBe(2);
  const [item] = (await runner.work()).items;
  await runner.claim(item!.taskId);
  metric = await scrape();
  expect(metric('openwork_desktop_tasks{state="claimed"}')).toBe(1);
  expect(metric("openwork_dispatch_seconds_count")).toBe(1);
  expect(metric('openwork_dispatch_seconds_bucket{le="+Inf"}')).toBe(1);
  // The runner goes silent: its lease is lost; the other task misses its deliverBy.
  await eventually(async () => {
    const now = await scrape();
    return now("openwork_lease_losses_total") === 1 && now("openwork_expirations_total") === 1 ? true : undefined;
  }, 5_000);
  expect(metric("openwork_runner_streams")).toBe(0);
});
