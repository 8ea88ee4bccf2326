import { errorFacts, errorPayload, type Logger, newReferenceId, sessionError } from "@openwork/remote-session-core";
import { HTTPException } from "hono/http-exception";

/**
 * The answer to an error nobody expected, on every route the gateway serves: the project's typed
 * body (`internal_error`, retryable, a `referenceId`) with the same `referenceId` in the log
 * line, never a plain-text 500. The line names the route family and path, and the error's class
 * and code only — never its message, which may quote what a caller sent.
 */
export function unexpectedErrorResponse(logger: Logger, family: string, request: Request, error: unknown): Response {
  // A refusal Hono middleware raised on purpose (a body limit…) keeps its own answer.
  if (error instanceof HTTPException) return error.getResponse();
  const referenceId = newReferenceId();
  logger.error(`${family}: request failed`, { method: request.method, path: pathOf(request), referenceId, error: errorFacts(error) });
  const body = errorPayload(sessionError("internal_error", "the gateway could not answer this request; retry, or quote the referenceId", { referenceId }));
  return Response.json(body, { status: 500, headers: { "cache-control": "no-store" } });
}

function pathOf(request: Request): string {
  try {
    return new URL(request.url).pathname.slice(0, 200);
  } catch {
    return "";
  }
}
