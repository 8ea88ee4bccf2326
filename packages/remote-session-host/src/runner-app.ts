import type { RunnerRoutes } from "@openwork/desktop-target";
import type { Logger } from "@openwork/remote-session-core";
import { Hono, type MiddlewareHandler } from "hono";
import { unexpectedErrorResponse } from "./unexpected-error.js";

/**
 * The desktop runner routes as a Hono app a host mounts with `app.route("/", runnerApp)`: the
 * routes' own Hono app (its error handler answers every error of a route), behind the host's
 * middleware (a per-member stream gate, a body limit) on every served prefix when given. The
 * `onError` here answers what that middleware throws.
 */
export function runnerApp(routes: RunnerRoutes, logger: Logger, before: readonly MiddlewareHandler[] = []): Hono {
  const app = new Hono();
  app.onError((error, c) => unexpectedErrorResponse(logger, "runner routes", c.req.raw, error));
  for (const prefix of routes.prefixes) {
    for (const middleware of before) app.use(`${prefix}/*`, middleware);
  }
  app.route("/", routes.app);
  return app;
}
