import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import { eventually } from "@openwork/runner-protocol/testing";
import { createNotifyChannels, enqueueNotification } from "@openwork/session-notify";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";
import { startWebhookReceiver, type WebhookReceiver } from "./testing/webhook-receiver.js";

const db = useTestDatabase();
const member = fixedDevMember("metrics");
let test: Awaited<ReturnType<typeof startTestGateway>>;
// 200 for /ok, 410 (no retry mends it: dead at once) for /gone, 503 (retried) for /busy.
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await startWebhookReceiver((path) => ({ "/ok": 200, "/gone": 410 })[path] ?? 503);
  test = await startTestGateway(db.current.url, member, {
    timings: { leaseMs: 600, heartbeatIntervalMs: 200, sweepIntervalMs: 100 },
    // A retry an hour away: the busy delivery stays retrying while the test looks.
    notify: { intervalMs: 100, backoff: () => 3_600_000, allowPrivateNetworks: true },
  });
}, 60_000);

afterAll(async () => {
  await test?.close();
  await hooks?.close();
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

it("counts notification deliveries by status: pending, retrying, sent and dead", async () => {
  const { channels } = test.gateway.notifications;
  const common = { memberId: member.memberId, eventKinds: ["turn_idle" as const] };
  for (const path of ["/ok", "/gone", "/busy"]) await channels.create(member.organizationId, { ...common, kind: "webhook", target: hooks.url(path) });
  // No SMTP on this gateway: an email channel (made where email is known, as a replica with SMTP
  // does) has no notifier here, and its delivery stays pending, untried.
  await createNotifyChannels(test.sql).create(member.organizationId, { ...common, kind: "email", target: "member@example.com" });
  const event = { kind: "turn_idle" as const, organizationId: member.organizationId, memberId: member.memberId, sessionId: "ses_metrics" };
  await enqueueNotification(test.sql, { ...event, id: "ses_metrics:1:idle", title: "metrics", state: "idle", occurredAt: new Date() });
  await hooks.until((received) => received.length === 3);
  await eventually(async () => {
    const metric = await scrape();
    const statuses = ["pending", "retrying", "sent", "dead"].map((status) => metric(`openwork_notification_deliveries{status="${status}"}`));
    return statuses.join() === "1,1,1,1" ? true : undefined;
  }, 5_000);
});
