import { errorFacts, type Logger, newReferenceId } from "@openwork/remote-session-core";
import type { ErrorHandler, MiddlewareHandler } from "hono";
import { ChannelRefusal } from "../channel-refusal.js";
import { errorResponse, refusalResponse } from "./to-response.js";

/**
 * Our protocol's one error handler: a refusal is its typed answer, anything else a 500 with a
 * reference id the log line carries too (never the error itself, which may hold request data).
 */
export function channelErrors(logger: Logger): ErrorHandler {
  return (error, c) => {
    if (error instanceof ChannelRefusal) return refusalResponse(error);
    const referenceId = newReferenceId();
    logger.error("desktop runner: request failed", { path: c.req.path, referenceId, error: errorFacts(error) });
    return errorResponse("internal_error", "the gateway could not answer; retry", { referenceId });
  };
}

/** Throws the typed 404 of a path no route serves. */
export function noSuchRoute(): never {
  throw new ChannelRefusal("not_found", "no such route");
}

/**
 * Hono answers a HEAD with its GET handler's headers; a runner route never serves HEAD (a stream
 * opened for one would stay subscribed with no reader), so it is refused as an unknown route.
 */
export function refuseHead(refuse: () => never): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "HEAD") refuse();
    await next();
  };
}
