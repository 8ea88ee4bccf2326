import ky, { HTTPError, TimeoutError } from "ky";
import type { z } from "zod";
import { RunnerErrorBodySchema } from "../v1/error-body.js";
import { describeIssues } from "../v1/issues.js";
import { type Backoff, DEFAULT_BACKOFF } from "./backoff.js";
import { RunnerProtocolError } from "./runner-protocol-error.js";

/** Retry policy for transient failures (network errors, timeouts, 429 and 5xx; never other 4xx). */
export interface RetryOptions {
  /** Retries after the first try. Default 4. */
  limit: number;
  backoff: Backoff;
}

export interface TransportOptions {
  /** Base URL of the routes (gateway base URL plus the runner prefix). */
  routesUrl: string;
  /** The `Authorization` header value for each request (read per request, so it can rotate). */
  authorization: () => Promise<string>;
  fetch?: typeof fetch;
  /** Per-request timeout. Default 30 s. */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
}

export type Call = <S extends z.ZodType>(
  method: "GET" | "POST" | "PUT",
  path: string,
  body: unknown,
  schema: S,
  signal?: AbortSignal,
  /** Headers of this request besides the transport's own (a task's `traceparent`). */
  headers?: Record<string, string>,
) => Promise<z.infer<S>>;

// What RunnerProtocolError calls retryable: 429 and every 5xx. A `Retry-After` on any of them is
// honoured, in seconds or as an HTTP date.
const RETRY_STATUSES = [429, ...Array.from({ length: 100 }, (_, i) => 500 + i)];

/**
 * A JSON-over-HTTP caller that validates every answer and retries only what may succeed later.
 * The retries are ky's own: every method (the runner's POSTs are idempotent at the gateway: a
 * claim, a heartbeat, a replayed event batch or completion; a PUT replaces what it names), `Retry-After` as the gateway sets
 * it, else base·2ⁿ capped at `maxMs` times a jitter factor in [0.5, 1.5).
 */
export function createHttpTransport(options: TransportOptions): Call {
  const retry: RetryOptions = { limit: 4, backoff: DEFAULT_BACKOFF, ...options.retry };
  const { baseMs, maxMs, random } = retry.backoff;
  const api = ky.create({
    timeout: options.timeoutMs ?? 30_000,
    retry: {
      limit: retry.limit,
      methods: ["get", "post", "put"],
      statusCodes: RETRY_STATUSES,
      afterStatusCodes: RETRY_STATUSES,
      retryOnTimeout: true,
      delay: (attempt) => Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30)),
      // Runners cut off together must not come back together.
      jitter: (delay) => Math.round(delay * (0.5 + random())),
      backoffLimit: maxMs,
    },
    // The token may have rotated while ky waited.
    hooks: { beforeRetry: [async ({ request }) => void request.headers.set("authorization", await options.authorization())] },
    // A redirect could carry the bearer token to another host: refuse it.
    redirect: "error",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const base = options.routesUrl.replace(/\/+$/, "");

  return async (method, path, body, schema, signal, headers) => {
    const authorization = await options.authorization();
    let response: Response;
    try {
      response = await api(base + path, {
        method,
        headers: { ...headers, authorization, accept: "application/json" },
        ...(body === undefined ? {} : { json: body }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (error instanceof HTTPError) throw errorFromResponse(error.response, await error.response.text().catch(() => ""));
      // A rotated token that no longer fits the gateway, read before a retry.
      if (RunnerProtocolError.isInstance(error)) throw error;
      throw toTransportError(error, signal);
    }
    const text = await response.text();
    const parsed = schema.safeParse(parseJson(text));
    if (!parsed.success) {
      throw new RunnerProtocolError({
        code: "invalid_response",
        status: response.status,
        message: `${method} ${path}: the gateway's answer does not match the protocol (${describeIssues(parsed.error)})`,
      });
    }
    return parsed.data;
  };
}

function toTransportError(error: unknown, signal?: AbortSignal): RunnerProtocolError {
  if (signal?.aborted) return new RunnerProtocolError({ code: "aborted", message: "request aborted", cause: error });
  if (error instanceof TimeoutError) {
    return new RunnerProtocolError({ code: "timeout", message: "the gateway did not answer in time", cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RunnerProtocolError({ code: "network_error", message: `cannot reach the gateway: ${message}`, cause: error });
}

/** The typed error of a runner route's non-2xx answer (its body, or its status), with the wait it asked for. */
export function errorFromResponse(response: Response, text: string): RunnerProtocolError {
  const body = RunnerErrorBodySchema.safeParse(parseJson(text));
  const retryAfterMs = body.success && body.data.retryAfterMs !== undefined ? body.data.retryAfterMs : retryAfterOf(response.headers.get("retry-after"));
  return new RunnerProtocolError({
    code: body.success ? body.data.error : `http_${response.status}`,
    message: body.success ? body.data.message : `the gateway answered ${response.status}`,
    status: response.status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterOf(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
