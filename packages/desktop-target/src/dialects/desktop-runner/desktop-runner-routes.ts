import { RUNNER_PATHS } from "@openwork/runner-protocol/internal";
import { type Context, Hono } from "hono";
import { authenticateRunner, verifyRunner } from "../../routes/authenticate-runner.js";
import { handleEventsStream } from "../../routes/handle-events-stream.js";
import { handleInventory } from "../../routes/handle-inventory.js";
import { handlePresence } from "../../routes/handle-presence.js";
import { handleEnableRunner, handleListRunners, handleRenameRunner, handleRevokeRunner } from "../../routes/handle-runner-admin.js";
import { handleHostComplete, handleHostEvents, handleHostHeartbeat } from "../../routes/handle-host-work.js";
import { handleClaim, handleClaimNext, handleComplete, handleHeartbeat, handleTaskEvents, handleWork } from "../../routes/handle-runner-requests.js";
import { handleToken } from "../../routes/handle-token.js";
import type { RouteContext } from "../../routes/route-context.js";
import { channelErrors, noSuchRoute, refuseHead } from "../../routes/route-errors.js";

// Task ids are gateway ids (`rst_…`); anything else cannot name a task. (Hono's path patterns
// take no braces inside a parameter's pattern, so the length is checked by the handler.)
const TASK_ID = /^rst_[0-9a-z]{26}$/;
const TASK = "/tasks/:taskId{rst_[0-9a-z]+}";
// A task of a kind the host registered: its id starts with the kind's prefix (`arun_…`).
const HOST_TASK_ID = /^[a-z][a-z0-9]{0,15}_[A-Za-z0-9_-]{1,120}$/;
const HOST_TASK = "/tasks/:taskId";
// Runner ids as registered: 8–160 characters, no slash.
const RUNNER = "/runners/:runnerId";

const taskIdOf = (c: Context): string => {
  const taskId = c.req.param("taskId") ?? "";
  return TASK_ID.test(taskId) ? taskId : noSuchRoute();
};
// An id no registered kind's prefix starts is no route, before any token is read (as for `rst_` ids).
const hostTaskIdOf = (ctx: RouteContext, c: Context): string => {
  const taskId = c.req.param("taskId") ?? "";
  return HOST_TASK_ID.test(taskId) && ctx.workKinds.ofTask(taskId) ? taskId : noSuchRoute();
};
const runnerIdOf = (c: Context): string => {
  const runnerId = c.req.param("runnerId") ?? "";
  if (runnerId.length < 8 || runnerId.length > 160) noSuchRoute();
  return runnerId;
};

/**
 * Our protocol's routes, relative to its prefix (`/v1/desktop-runner`): the member routes (token,
 * presence, the list of desktops) and the runner routes. A runner route verifies the token first,
 * then the registration — a completion reads it (when its cache holds none) in its own
 * transaction (one round trip fewer).
 */
export function desktopRunnerRoutes(ctx: RouteContext, options: { prefix: string; presenceWindowMs: number }): Hono {
  const { prefix, presenceWindowMs } = options;
  const registered = (c: Context) => authenticateRunner(ctx, c.req.raw, "desktop-runner");
  const task = async (c: Context) => {
    const taskId = taskIdOf(c);
    return [await registered(c), taskId] as const;
  };
  const hostTask = async (c: Context) => {
    const taskId = hostTaskIdOf(ctx, c);
    return [await registered(c), taskId] as const;
  };
  const app = new Hono();
  app.onError(channelErrors(ctx.logger));
  app.use(refuseHead(noSuchRoute));
  app.post(RUNNER_PATHS.token, (c) => handleToken(ctx, c.req.raw, prefix));
  app.get(RUNNER_PATHS.presence, (c) => handlePresence(ctx, c.req.raw, presenceWindowMs));
  app.get("/runners", (c) => handleListRunners(ctx, c.req.raw, presenceWindowMs));
  app.patch(RUNNER, (c) => handleRenameRunner(ctx, c.req.raw, runnerIdOf(c)));
  app.delete(RUNNER, (c) => handleRevokeRunner(ctx, c.req.raw, runnerIdOf(c)));
  app.post(`${RUNNER}/enable`, (c) => handleEnableRunner(ctx, c.req.raw, runnerIdOf(c)));
  app.get(RUNNER_PATHS.work, async (c) => handleWork(ctx, await registered(c)));
  // A stream's opening is its presence: read past the registration cache (see authenticateRunner).
  app.get(RUNNER_PATHS.events, async (c) => handleEventsStream(ctx, await authenticateRunner(ctx, c.req.raw, "desktop-runner", { fresh: true }), c.req.raw));
  app.put(RUNNER_PATHS.inventory, async (c) => handleInventory(ctx, await registered(c), c.req.raw));
  app.post(RUNNER_PATHS.claimNext, async (c) => handleClaimNext(ctx, await registered(c), c.req.raw));
  // The id is checked before the token: a path that cannot name a task is a 404 to anyone.
  app.post(`${TASK}/claim`, async (c) => handleClaim(ctx, ...(await task(c)), c.req.raw));
  app.post(`${TASK}/heartbeat`, async (c) => handleHeartbeat(ctx, ...(await task(c)), c.req.raw));
  app.post(`${TASK}/events`, async (c) => handleTaskEvents(ctx, ...(await task(c)), c.req.raw));
  app.post(`${TASK}/complete`, async (c) => {
    const taskId = taskIdOf(c);
    return handleComplete(ctx, await verifyRunner(ctx, c.req.raw, "desktop-runner"), taskId, c.req.raw);
  });
  // Tasks of the host's own kinds (protocol 4), claimed through claim-next only.
  app.post(`${HOST_TASK}/heartbeat`, async (c) => handleHostHeartbeat(ctx, ...(await hostTask(c)), c.req.raw));
  app.post(`${HOST_TASK}/events`, async (c) => handleHostEvents(ctx, ...(await hostTask(c)), c.req.raw));
  app.post(`${HOST_TASK}/complete`, async (c) => handleHostComplete(ctx, ...(await hostTask(c)), c.req.raw));
  app.all("*", noSuchRoute);
  return app;
}
