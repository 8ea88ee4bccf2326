import { errorFacts, newReferenceId } from "@openwork/remote-session-core";
import { LIMITS } from "@openwork/runner-protocol";
import type { OpenworkCapability } from "@openwork/runner-protocol/internal";
import { mintRunnerToken } from "@openwork/runner-protocol/server";
import { type Context, Hono } from "hono";
import { ChannelRefusal } from "../../channel-refusal.js";
import { listRunners } from "../../store/list-runners.js";
import { registerRunner } from "../../store/register-runner.js";
import { saveInventory } from "../../store/save-inventory.js";
import { entryPointOf } from "../../routes/entry-point.js";
import { revokedStep } from "../../routes/handle-token.js";
import { handleEventsStream } from "../../routes/handle-events-stream.js";
import { readJsonBody } from "../../routes/read-json-body.js";
import { refuseHead } from "../../routes/route-errors.js";
import { type OpenworkContext, type OpenworkHandler, type OpenworkRoute, runnerCall } from "./openwork-call.js";
import {
  EmptyBodySchema,
  InventorySchema,
  OpenworkMintSchema,
  OpenworkRefusal,
  openworkJson,
  parseOpenwork,
  PathIdSchema,
  refusalBody,
  RunCompleteSchema,
  RunEventSchema,
  RunHeartbeatSchema,
} from "./openwork-wire.js";
import { runItems } from "./openwork-runs.js";
import { OPENWORK_SESSION_ROUTES } from "./openwork-session-routes.js";

const mint =
  (sessionRunner: boolean): OpenworkHandler =>
  async (ctx, request) => {
    const member = await ctx.authenticateMember(request);
    if (!member) throw new OpenworkRefusal(401, "unauthorized");
    const body = parseOpenwork(OpenworkMintSchema, await readJsonBody(request));
    if (!(await ctx.isActiveMember(member))) throw new OpenworkRefusal(401, "unauthorized");
    if (sessionRunner && !(await ctx.sessionRunnerTargets(member))) throw new OpenworkRefusal(404, "feature_disabled");
    const capabilities: OpenworkCapability[] = sessionRunner ? [...new Set([...body.capabilities, "remote_session_only_v1" as const])] : body.capabilities;
    const route = sessionRunner ? "/v1/session-runners/token" : "/v1/automation-runners/token";
    // The entry point is the request's URL without the route: its base path stays in the audience
    // (`<origin>/api/den`, what the desktop uses as its base URL).
    const audience = entryPointOf(request, route, ctx.proxyTrust);
    if (!audience) throw new OpenworkRefusal(500, "automation_runner_audience_invalid");
    // A revoked desktop is told so; a 404 on the mint makes a released desktop wait (30 minutes)
    // instead of stepping its capabilities down, as a 400 would.
    if (!(await registerRunner(ctx.sql, member, { ...body, name: null, capabilities, dialect: "openwork" }))) {
      throw new OpenworkRefusal(404, "runner_revoked", revokedStep(body.runnerId));
    }
    const { token, claims } = mintRunnerToken({
      secret: ctx.secret,
      organizationId: member.organizationId,
      memberId: member.memberId,
      runnerId: body.runnerId,
      capabilities,
      audience,
    });
    ctx.logger.info("desktop runner: OpenWork token minted", { runnerId: body.runnerId, capabilities: capabilities.length });
    return openworkJson(200, { token, expiresAt: claims.e, eventsPath: "/v1/automation-runners/events" });
  };

const presence: OpenworkHandler = async (ctx, request) => {
  const member = await ctx.authenticateMember(request);
  if (!member) throw new OpenworkRefusal(401, "unauthorized");
  const [latest] = await listRunners(ctx.sql, member);
  const lastSeenAt = latest ? latest.seen_at.getTime() : null;
  return openworkJson(200, { connected: lastSeenAt !== null && Date.now() - lastSeenAt <= ctx.presenceWindowMs, lastSeenAt });
};

const runners: OpenworkHandler = async (ctx, request) => {
  const member = await ctx.authenticateMember(request);
  if (!member) throw new OpenworkRefusal(401, "unauthorized");
  const items = (await listRunners(ctx.sql, member)).map((r) => ({
    kind: "desktop",
    id: r.runner_id,
    platform: r.platform,
    appVersion: r.app_version,
    lastSeenAt: r.seen_at.getTime(),
    connected: Date.now() - r.seen_at.getTime() <= ctx.presenceWindowMs,
  }));
  return openworkJson(200, { items });
};

const events: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, null);
  return handleEventsStream(ctx, runner, request);
};

// Automation runs are the host's (`openworkRuns`): its routes answer them. Without them no run is
// ever claimable, and the answers are OpenWork's for a run that is not (or no longer) this
// runner's: never a 404 a desktop would log as a broken server, never a 401/403 that would retire
// its credential.
const runClaim: OpenworkHandler = async (ctx, request) => {
  if (ctx.openworkRuns) return ctx.openworkRuns.fetch(request);
  await runnerCall(ctx, request, EmptyBodySchema);
  return openworkJson(200, { assignment: null });
};
const runLeaseLost =
  (schema: typeof RunHeartbeatSchema | typeof RunEventSchema | typeof RunCompleteSchema): OpenworkHandler =>
  async (ctx, request) => {
    if (ctx.openworkRuns) return ctx.openworkRuns.fetch(request);
    await runnerCall(ctx, request, schema);
    throw new OpenworkRefusal(409, "runner_lease_lost");
  };

const inventory: OpenworkHandler = async (ctx, request) => {
  const { runner, body } = await runnerCall(ctx, request, InventorySchema);
  if (JSON.stringify(body).length > LIMITS.inventoryBytes) throw new OpenworkRefusal(400, "invalid_request", "the inventory is too large");
  const updated = await saveInventory(ctx.sql, runner, body);
  if (!updated) throw new OpenworkRefusal(404, "runner_not_registered");
  return openworkJson(200, { ok: true, updatedAt: updated.getTime() });
};

// The host's runs first: an automation-only desktop takes the first item that names a run. Never
// on the session-runner path (OpenWork's rule).
const work =
  (withRuns: boolean): OpenworkHandler =>
  async (ctx, request) => {
    const { runner } = await runnerCall(ctx, request, null);
    const runs = withRuns ? await runItems(ctx.openworkRuns, runner) : [];
    return openworkJson(200, { items: [...runs, ...(await OPENWORK_SESSION_ROUTES.workItems(ctx, runner))] });
  };

const ROUTES: readonly OpenworkRoute[] = [
  ["POST", "/v1/automation-runners/token", mint(false)],
  ["POST", "/v1/session-runners/token", mint(true)],
  ["GET", "/v1/automation-runners/presence", presence],
  ["GET", "/v1/automation-runners", runners],
  ["GET", "/v1/automation-runners/events", events],
  ["GET", "/v1/automation-runner/work", work(true)],
  ["GET", "/v1/session-runners/work", work(false)],
  ["PUT", "/v1/automation-runner/inventory", inventory],
  ["PUT", "/v1/session-runners/inventory", inventory],
  ["POST", "/v1/automation-runs/:id/claim", runClaim],
  ["POST", "/v1/automation-runs/:id/heartbeat", runLeaseLost(RunHeartbeatSchema)],
  ["POST", "/v1/automation-runs/:id/events", runLeaseLost(RunEventSchema)],
  ["POST", "/v1/automation-runs/:id/complete", runLeaseLost(RunCompleteSchema)],
  ...OPENWORK_SESSION_ROUTES.routes,
];

/** OpenWork's route families: every path under them is OpenWork's (an unknown one is its JSON 404). */
export const OPENWORK_PREFIXES = [
  "/v1/automation-runners",
  "/v1/automation-runner",
  "/v1/automation-runs",
  "/v1/remote-session-commands",
  "/v1/remote-session-requests",
  "/v1/session-runners",
] as const;

const notFound = (): never => {
  throw new OpenworkRefusal(404, "not_found");
};

/** A path id as den-api reads it: 1–160 characters (a longer one names no route). */
function pathIdOf(c: Context): string {
  const id = c.req.param("id") ?? "";
  return id.length > 160 ? notFound() : parseOpenwork(PathIdSchema, id);
}

/**
 * OpenWork's runner channel (the wire spec's §2), for OpenWork desktops already installed: the
 * same runners, sessions, tasks, presence and streams as our protocol, in OpenWork's shapes and
 * error bodies, relative to a base path (`""` for `/v1/…`, `/api/den` for the base URL OpenWork's
 * desktops use). Every path of its families is answered here.
 */
export function openworkRoutes(ctx: OpenworkContext): Hono {
  const app = new Hono();
  app.onError((error, c) => {
    if (error instanceof OpenworkRefusal) return refusalBody(error);
    if (error instanceof ChannelRefusal) return refusalBody(fromChannelRefusal(error));
    const referenceId = newReferenceId();
    ctx.logger.error("desktop runner: OpenWork request failed", { path: c.req.path, referenceId, error: errorFacts(error) });
    return openworkJson(500, { error: "internal_error", referenceId });
  });
  app.use(refuseHead(notFound));
  for (const [method, path, handler] of ROUTES) {
    app.on(method, path, (c) => handler(ctx, c.req.raw, path.includes(":id") ? [pathIdOf(c)] : []));
  }
  for (const prefix of OPENWORK_PREFIXES) {
    app.all(prefix, notFound);
    app.all(`${prefix}/*`, notFound);
  }
  return app;
}

function fromChannelRefusal(refusal: ChannelRefusal): OpenworkRefusal {
  if (refusal.code === "runner_unauthorized" || refusal.code === "membership_required") return new OpenworkRefusal(401, "runner_unauthorized");
  if (refusal.code === "payload_too_large") return new OpenworkRefusal(413, "payload_too_large", refusal.message);
  if (refusal.code === "invalid_request") return new OpenworkRefusal(400, "invalid_request", refusal.message, { details: refusal.extra.issues ?? [] });
  return new OpenworkRefusal(409, refusal.code, refusal.message);
}
