import { createRunnerClient } from "@openwork/runner-protocol/client";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerGateway, startRunnerGateway } from "./testing/runner-gateway.js";

const db = useTestDatabase();
let gateway: RunnerGateway;
const member = { organizationId: "org_presence", memberId: "mem_presence" };

beforeAll(async () => {
  gateway = await startRunnerGateway(db.current.url);
});
afterAll(async () => {
  await gateway.close();
});

const online = async () => (await gateway.target.availability(gateway.call(member))).machines?.find((m) => m.runnerId === "presence-runner-01")?.online;

describe("presence", () => {
  it("goes offline when the runner's wake stream closes, not only when the window passes, and comes back with its next request", async () => {
    const token = await gateway.registerRunner(member, "presence-runner-01");
    const stream = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/desktop-runner/events`, { headers: { authorization: `Bearer ${token}` }, signal: stream.signal });
    const reader = response.body!.getReader();
    await reader.read();
    expect(await online()).toBe(true);
    stream.abort();
    await expect.poll(online, { timeout: 3_000 }).toBe(false);
    await createRunnerClient({ baseUrl: gateway.baseUrl, token }).work();
    expect(await online()).toBe(true);
  });

  it("marks a closed stream offline once: a late second end of the same stream (its body cancelled after the abort) leaves a runner that came back online", async () => {
    const token = await gateway.registerRunner(member, "presence-runner-01");
    const stream = new AbortController();
    const response = await gateway.request("/v1/desktop-runner/events", { headers: { authorization: `Bearer ${token}` }, signal: stream.signal });
    const reader = response.body!.getReader();
    await reader.read();
    stream.abort();
    await expect.poll(online, { timeout: 3_000 }).toBe(false);
    await createRunnerClient({ baseUrl: gateway.baseUrl, token }).work();
    expect(await online()).toBe(true);
    // The host cancels the body after the request's abort (node's server does, on the socket's close).
    await reader.cancel().catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await online()).toBe(true);
  });
});
