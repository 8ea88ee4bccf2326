import { errorFacts, errorPayload, type Logger, newReferenceId, sessionError } from "@openwork/remote-session-core";
import { HTTPException } from "hono/http-exception";

/**
 * The answer to an error no handler expected: a typed JSON body (`internal_error`, retryable)
 * whose `referenceId` is in exactly one log line, never the error's text. A refusal Hono
 * middleware raised on purpose (a body limit…) keeps its own answer.
 */
export function unexpectedErrorResponse(logger: Logger, family: string, request: Request, error: unknown): Response {
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
