import type { RunnerRoutes } from "@openwork/desktop-target";
import type { Logger } from "@openwork/remote-session-core";
import { Hono, type MiddlewareHandler } from "hono";
import { unexpectedErrorResponse } from "./unexpected-error.js";

/**
 * The desktop runner routes as a Hono app a host mounts with `app.route("/", runnerApp)`: every
 * served prefix with its sub-paths, one `onError`, and the host's own middleware (a per-member
 * stream gate, a body limit) in front when given.
 */
export function runnerApp(routes: RunnerRoutes, logger: Logger, before: readonly MiddlewareHandler[] = []): Hono {
  const app = new Hono();
  app.onError((error, c) => unexpectedErrorResponse(logger, "runner routes", c.req.raw, error));
  for (const prefix of routes.prefixes) {
    for (const middleware of before) app.use(`${prefix}/*`, middleware);
    app.all(prefix, (c) => routes.fetch(c.req.raw));
    app.all(`${prefix}/*`, (c) => routes.fetch(c.req.raw));
  }
  return app;
}
