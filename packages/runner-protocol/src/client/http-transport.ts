import ky, { TimeoutError } from "ky";
import type { z } from "zod";
import { RunnerErrorBodySchema } from "../v1/error-body.js";
import { describeIssues } from "../v1/issues.js";
import { type Timers, sleep, systemTimers } from "../timers.js";
import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from "./backoff.js";
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
  timers?: Timers;
}

export type Call = <S extends z.ZodType>(
  method: "GET" | "POST",
  path: string,
  body: unknown,
  schema: S,
  signal?: AbortSignal,
) => Promise<z.infer<S>>;

/** A JSON-over-HTTP caller that validates every answer and retries only what may succeed later. */
export function createHttpTransport(options: TransportOptions): Call {
  const retry: RetryOptions = { limit: 4, backoff: DEFAULT_BACKOFF, ...options.retry };
  const timers = options.timers ?? systemTimers;
  const api = ky.create({
    timeout: options.timeoutMs ?? 30_000,
    retry: 0,
    throwHttpErrors: false,
    // A redirect could carry the bearer token to another host: refuse it.
    redirect: "error",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const base = options.routesUrl.replace(/\/+$/, "");

  const once = async <S extends z.ZodType>(
    method: string,
    path: string,
    body: unknown,
    schema: S,
    signal?: AbortSignal,
  ): Promise<z.infer<S>> => {
    const authorization = await options.authorization();
    let response: Response;
    try {
      response = await api(base + path, {
        method,
        headers: { authorization, accept: "application/json" },
        ...(body === undefined ? {} : { json: body }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw toTransportError(error, signal);
    }
    const text = await response.text();
    if (!response.ok) throw errorFromResponse(response, text);
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

  return async (method, path, body, schema, signal) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(method, path, body, schema, signal);
      } catch (error) {
        const retryable = RunnerProtocolError.isInstance(error) && error.retryable;
        if (!retryable || attempt >= retry.limit || signal?.aborted) throw error;
        await sleep(timers, error.retryAfterMs ?? backoffDelay(attempt, retry.backoff), signal);
        if (signal?.aborted) throw error;
      }
    }
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

function errorFromResponse(response: Response, text: string): RunnerProtocolError {
  const body = RunnerErrorBodySchema.safeParse(parseJson(text));
  const header = Number(response.headers.get("retry-after"));
  const retryAfterMs = body.success && body.data.retryAfterMs !== undefined
    ? body.data.retryAfterMs
    : Number.isFinite(header) && header >= 0 && response.headers.has("retry-after")
      ? header * 1000
      : undefined;
  return new RunnerProtocolError({
    code: body.success ? body.data.error : `http_${response.status}`,
    message: body.success ? body.data.message : `the gateway answered ${response.status}`,
    status: response.status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
