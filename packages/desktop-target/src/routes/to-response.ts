import { BODY_TOO_LARGE_HEADERS } from "@openwork/remote-session-core/internal";
import { toMessageIssues } from "@openwork/runner-protocol/internal";
import type { z } from "zod";
import { CHANNEL_ERROR_STATUS, type ChannelErrorCode, ChannelRefusal } from "../channel-refusal.js";

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
  });
}

export function errorResponse(code: ChannelErrorCode, message: string, extra: Record<string, unknown> = {}): Response {
  const headers: Record<string, string> =
    code === "runner_unauthorized" ? { "www-authenticate": 'Bearer realm="desktop-runner"' } : code === "payload_too_large" ? BODY_TOO_LARGE_HEADERS : {};
  return json(CHANNEL_ERROR_STATUS[code], { error: code, message, ...extra }, headers);
}

/** The one place a refusal becomes an HTTP answer. */
export function refusalResponse(refusal: ChannelRefusal): Response {
  return errorResponse(refusal.code, refusal.message, refusal.extra);
}

/** Parses with a schema or refuses with `invalid_request` and the issues. */
export function parseOrRefuse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ChannelRefusal("invalid_request", "the request body does not match the protocol", {
    issues: toMessageIssues(parsed.error),
  });
}
