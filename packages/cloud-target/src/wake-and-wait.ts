import { errorFacts, type Logger, type MemberScope } from "@openwork/remote-session-core";
import { fail } from "./cloud-errors.js";
import { ResolverConfigurationError } from "./http-worker-resolver.js";
import type { ReadyWorker, WorkerResolver } from "./worker-resolver.js";

export interface WakeAndWaitOptions {
  resolver: WorkerResolver;
  /** Where a failing resolver is reported (its class and status, nothing of the member). */
  logger?: Pick<Logger, "error">;
  /** How long one call may wait for a waking worker. Default 25 s. */
  budgetMs?: number;
  /** Readiness poll. Default 1 s. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

// den-api's refusal of a member without access to OpenWork Web: the member's own step.
const WEB_ACCESS_REQUIRED = "openwork_web_access_required";
const WEB_ACCESS_ACTION = "Ask an admin of your organization for access to OpenWork Web, then try again.";
const SETUP_ACTION = "Set up OpenWork Cloud for your account in the OpenWork dashboard, then try again.";

/**
 * Waits for the member's worker within the call budget. Past it: `cloud_runtime_waking` or
 * `cloud_runtime_provisioning` with `retryAfterMs` (the caller retries the same call); no worker:
 * `needs_cloud_setup`; failed: `cloud_runtime_failed`; resolver unreachable:
 * `cloud_runtime_unreachable`. Concurrent calls for one member share one wait.
 */
export function createWakeAndWait(options: WakeAndWaitOptions): (scope: MemberScope, budgetMs?: number) => Promise<ReadyWorker> {
  const budgetMs = options.budgetMs ?? 25_000;
  const pollMs = options.pollMs ?? 1_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, Promise<ReadyWorker>>();
  // Each configuration mistake is told to the operator once (again after a success).
  const reported = new Set<string>();
  const resolverFailed = (error: unknown): never => {
    if (!(error instanceof ResolverConfigurationError)) {
      options.logger?.error("cloud target: the worker resolver failed", errorFacts(error));
      return fail("cloud_runtime_unreachable", "the cloud worker service could not be reached; retry shortly", { retryAfterMs: 5_000 });
    }
    const problem = `${error.status} ${error.code}`;
    if (!reported.has(problem)) {
      reported.add(problem);
      options.logger?.error(`cloud target: the worker resolver is misconfigured: ${error.fix}`, { status: error.status, code: error.code });
    }
    // Not the member's own setup step: nothing they can do, and it may be fixed any minute.
    return fail("cloud_runtime_unreachable", "OpenWork Cloud is unavailable right now (the gateway could not reach it); retry later", { retryAfterMs: 30_000 });
  };

  const waking = () => fail("cloud_runtime_waking", "the cloud worker is starting; retry the same call", { retryAfterMs: 5_000 });
  const wait = async (scope: MemberScope, budget: number): Promise<ReadyWorker> => {
    const deadline = now() + budget;
    for (;;) {
      let resolution: Awaited<ReturnType<typeof options.resolver.resolve>>;
      try {
        resolution = await options.resolver.resolve(scope);
      } catch (error) {
        return resolverFailed(error);
      }
      if (resolution.status !== "failed") reported.clear();
      switch (resolution.status) {
        case "ready":
          return { workerId: resolution.workerId, url: resolution.url, clientToken: resolution.clientToken };
        case "missing":
          return fail("needs_cloud_setup", "this member has no cloud worker", { action: SETUP_ACTION });
        case "failed":
          if (resolution.reason === WEB_ACCESS_REQUIRED) {
            return fail("cloud_runtime_failed", "this member may not use OpenWork Web, where cloud workers run", { action: WEB_ACCESS_ACTION });
          }
          return fail("cloud_runtime_failed", `the cloud worker failed${resolution.reason ? ` (${resolution.reason})` : ""}`);
        default: {
          const left = deadline - now();
          if (left <= 0) {
            return resolution.status === "provisioning"
              ? fail("cloud_runtime_provisioning", "the cloud worker is being set up; retry the same call", { retryAfterMs: 30_000 })
              : waking();
          }
          await sleep(Math.min(pollMs, left));
        }
      }
    }
  };

  // A call may wait less than the budget (a read asked for `waitMs`): it looks at least once, then
  // leaves with `cloud_runtime_waking` when its own time is up, while a full wait may go on.
  return (scope, callBudgetMs = budgetMs) => {
    const key = `${scope.organizationId}\u0000${scope.memberId}`;
    const existing = inFlight.get(key);
    if (existing) return callBudgetMs >= budgetMs ? existing : Promise.race([existing, sleep(callBudgetMs).then(waking)]);
    if (callBudgetMs < budgetMs) return wait(scope, callBudgetMs);
    const shared = wait(scope, budgetMs).finally(() => inFlight.delete(key));
    inFlight.set(key, shared);
    return shared;
  };
}
