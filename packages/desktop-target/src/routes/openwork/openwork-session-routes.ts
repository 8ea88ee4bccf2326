import type { AuthenticatedRunner } from "../authenticate-runner.js";
import { type OpenworkContext, type OpenworkHandler, type OpenworkRoute, runnerCall } from "./openwork-routes.js";
import { CommandCompleteSchema, EmptyBodySchema, OpenworkRefusal, openworkJson, RequestCompleteSchema, SessionReportSchema } from "./openwork-wire.js";

const ID = "([^/]{1,160})";

/** 403 for a runner without the capability a route needs: the only 403 OpenWork's desktops expect. */
function requireCapability(runner: AuthenticatedRunner, capability: string): void {
  if (!runner.capabilities.includes(capability)) throw new OpenworkRefusal(403, "runner_capability_missing");
}

// Remote sessions in OpenWork's command protocol. No command or request is ever addressed to an
// OpenWork desktop yet, so every id is one this runner cannot claim: the answers below are
// OpenWork's for exactly that.
const commandClaim: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, EmptyBodySchema);
  requireCapability(runner, "remote_session_v1");
  throw new OpenworkRefusal(409, "command_claim_conflict");
};
const commandComplete: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, CommandCompleteSchema);
  requireCapability(runner, "remote_session_v1");
  throw new OpenworkRefusal(409, "command_complete_conflict");
};
const commandSession: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, SessionReportSchema);
  requireCapability(runner, "remote_session_v1");
  throw new OpenworkRefusal(404, "command_not_found");
};
const pending: OpenworkHandler = async (ctx, request) => {
  await runnerCall(ctx, request, null);
  return openworkJson(200, { items: [] });
};
const requestClaim: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, EmptyBodySchema);
  requireCapability(runner, "remote_session_control_v1");
  throw new OpenworkRefusal(409, "request_claim_conflict");
};
const requestComplete: OpenworkHandler = async (ctx, request) => {
  const { runner } = await runnerCall(ctx, request, RequestCompleteSchema);
  requireCapability(runner, "remote_session_control_v1");
  throw new OpenworkRefusal(409, "request_complete_conflict");
};

export const OPENWORK_SESSION_ROUTES = {
  routes: [
    ["POST", new RegExp(`^/v1/remote-session-commands/${ID}/claim$`), commandClaim],
    ["POST", new RegExp(`^/v1/remote-session-commands/${ID}/complete$`), commandComplete],
    ["POST", new RegExp(`^/v1/remote-session-commands/${ID}/session$`), commandSession],
    ["GET", /^\/v1\/remote-session-requests\/pending$/, pending],
    ["POST", new RegExp(`^/v1/remote-session-requests/${ID}/claim$`), requestClaim],
    ["POST", new RegExp(`^/v1/remote-session-requests/${ID}/complete$`), requestComplete],
  ] as readonly OpenworkRoute[],
  /** The work items of an OpenWork runner: no Automation runs (none are scheduled here), and no remote-session commands yet. */
  workItems: async (_ctx: OpenworkContext, _runner: AuthenticatedRunner): Promise<unknown[]> => [],
};
