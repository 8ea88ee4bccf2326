import { authenticateRunner } from "../../routes/authenticate-runner.js";
import type { AuthenticatedRunner } from "../../store/check-registration.js";
import { readJsonBody } from "../../routes/read-json-body.js";
import type { RouteContext } from "../../routes/route-context.js";
import { parseOpenwork } from "./openwork-wire.js";

/** What the OpenWork dialect needs beyond the shared route context. */
export interface OpenworkContext extends RouteContext {
  /** Whether the member's organization has OpenWork's `remoteSessionTargets` feature (session-runner mint). */
  sessionRunnerTargets(scope: { organizationId: string; memberId: string }): Promise<boolean>;
}

/** A matched OpenWork route: its handler gets the request and the path ids. */
export type OpenworkHandler = (ctx: OpenworkContext, request: Request, ids: string[]) => Promise<Response>;
/** A route: its method, its Hono path (`:id` is the one path id), its handler. */
export type OpenworkRoute = readonly [method: string, path: string, handler: OpenworkHandler];

/** An authenticated OpenWork runner request: body first (den-api validates before it authenticates). */
export async function runnerCall<S extends Parameters<typeof parseOpenwork>[0]>(
  ctx: OpenworkContext,
  request: Request,
  schema: S | null,
): Promise<{ runner: AuthenticatedRunner; body: ReturnType<typeof parseOpenwork<S>> }> {
  const body = schema ? parseOpenwork(schema, await readJsonBody(request)) : (undefined as never);
  return { runner: await authenticateRunner(ctx, request, "openwork"), body };
}
