import { SessionFailure } from "@openwork/remote-session-core";
import { describe, expect, it } from "vitest";
import { ResolverConfigurationError } from "./http-worker-resolver.js";
import { createWakeAndWait } from "./wake-and-wait.js";
import type { WorkerResolution } from "./worker-resolver.js";

const scope = { organizationId: "org_1", memberId: "mem_1" };
const ready: WorkerResolution = { status: "ready", workerId: "w1", url: "http://127.0.0.1:1", clientToken: "c" };
const errorOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);

/** A clock that moves only when the waiter sleeps, so budgets are exact and tests instant. */
function fakeClock() {
  let now = 0;
  return { now: () => now, sleep: async (ms: number) => void (now += ms) };
}

function resolverOf(sequence: (WorkerResolution | Error)[]) {
  let calls = 0;
  return {
    calls: () => calls,
    resolver: {
      resolve: async () => {
        const next = sequence[Math.min(calls++, sequence.length - 1)]!;
        if (next instanceof Error) throw next;
        return next;
      },
    },
  };
}

describe("wake and wait", () => {
  it("polls every second until the worker is ready within the budget", async () => {
    const { resolver, calls } = resolverOf([{ status: "waking" }, { status: "waking" }, ready]);
    const clock = fakeClock();
    const worker = await createWakeAndWait({ resolver, ...clock })(scope);
    expect(worker).toEqual({ workerId: "w1", url: "http://127.0.0.1:1", clientToken: "c" });
    expect(calls()).toBe(3);
    expect(clock.now()).toBe(2_000);
  });

  it("answers a retryable waking or provisioning state past the budget", async () => {
    const waking = resolverOf([{ status: "waking" }]);
    expect(await createWakeAndWait({ resolver: waking.resolver, ...fakeClock(), budgetMs: 25_000 })(scope).catch(errorOf)).toMatchObject({
      error: "cloud_runtime_waking",
      retryable: true,
      retryAfterMs: 5_000,
    });
    expect(waking.calls()).toBe(26);
    const provisioning = resolverOf([{ status: "provisioning" }]);
    expect(await createWakeAndWait({ resolver: provisioning.resolver, ...fakeClock() })(scope).catch(errorOf)).toMatchObject({
      error: "cloud_runtime_provisioning",
      retryAfterMs: 30_000,
    });
  });

  it("maps missing, failed and an unreachable resolver", async () => {
    const run = (r: WorkerResolution | Error) => createWakeAndWait({ resolver: resolverOf([r]).resolver, ...fakeClock() })(scope).catch(errorOf);
    expect(await run({ status: "missing" })).toMatchObject({ error: "needs_cloud_setup", action: expect.any(String) });
    expect(await run({ status: "failed", reason: "preview_expired" })).toMatchObject({ error: "cloud_runtime_failed", retryable: false });
    expect(await run(new Error("ECONNREFUSED"))).toMatchObject({ error: "cloud_runtime_unreachable", retryable: true });
  });

  it("reports a misconfigured resolver to the operator once, naming the fix, and to members as retryable cloud unavailable", async () => {
    const logged: { message: string; fields: unknown }[] = [];
    const mistake = new ResolverConfigurationError(404, "cloud_not_found", "check the gateway key");
    const { resolver } = resolverOf([mistake, mistake, ready, mistake]);
    const wait = createWakeAndWait({ resolver, logger: { error: (message, fields) => void logged.push({ message, fields }) }, ...fakeClock() });
    for (let i = 0; i < 2; i++) {
      expect(await wait(scope).catch(errorOf)).toMatchObject({
        error: "cloud_runtime_unreachable",
        retryable: true,
        message: expect.stringContaining("OpenWork Cloud is unavailable"),
      });
    }
    expect(logged).toEqual([{ message: expect.stringContaining("misconfigured: check the gateway key"), fields: { status: 404, code: "cloud_not_found" } }]);
    // Fixed, then broken again: told again.
    await wait(scope);
    await wait(scope).catch(errorOf);
    expect(logged).toHaveLength(2);
  });

  it("tells a member without OpenWork Web access their own step", async () => {
    const wait = createWakeAndWait({ resolver: resolverOf([{ status: "failed", reason: "openwork_web_access_required" }]).resolver, ...fakeClock() });
    expect(await wait(scope).catch(errorOf)).toMatchObject({
      error: "cloud_runtime_failed",
      retryable: false,
      action: expect.stringContaining("access to OpenWork Web"),
    });
  });

  it("shares one wait between concurrent calls of a member", async () => {
    const { resolver, calls } = resolverOf([{ status: "waking" }, { status: "waking" }, ready]);
    const wait = createWakeAndWait({ resolver, pollMs: 20 });
    const workers = await Promise.all(Array.from({ length: 6 }, () => wait(scope)));
    expect(workers.every((w) => w.workerId === "w1")).toBe(true);
    expect(calls()).toBe(3);
    // Another member waits on its own.
    await wait({ ...scope, memberId: "mem_2" });
    expect(calls()).toBe(4);
  });
});
