import type { z } from "zod";
import {
  type Assignment,
  type ClaimedAssignment,
  ClaimNextRequestSchema,
  type ClaimNextResponse,
  ClaimNextResponseSchema,
  ClaimResponseSchema,
} from "../v1/assignment.js";
import { AnyCompleteRequestSchema, type CompleteRequest, CompleteResponseSchema, type WorkCompleteRequest } from "../v1/complete.js";
import { HeartbeatRequestSchema, HeartbeatResponseSchema } from "../v1/heartbeat.js";
import { type InventoryRequest, InventoryRequestSchema, InventoryResponseSchema } from "../v1/inventory.js";
import { describeIssues } from "../v1/issues.js";
import { RUNNER_PATHS, RUNNER_ROUTE_PREFIX } from "../v1/paths.js";
import { TokenMintResponseSchema, type TokenMintRequest, TokenMintRequestSchema } from "../v1/registration.js";
import { PostEventsRequestSchema, PostEventsResponseSchema, type TaskEvent } from "../v1/task-events.js";
import { mayPresentRunnerToken } from "../v1/token-claims.js";
import { WorkResponseSchema } from "../v1/work.js";
import type { WorkKind } from "../v1/work-kinds.js";
import { type TransportOptions, createHttpTransport } from "./http-transport.js";
import { RunnerProtocolError } from "./runner-protocol-error.js";

export interface RunnerClientOptions extends Omit<TransportOptions, "routesUrl" | "authorization"> {
  /** The gateway base URL: the audience the runner token was minted for. */
  baseUrl: string;
  /** Route prefix. Default `/v1/desktop-runner`. */
  prefix?: string;
  /** The runner token, or a function that returns the current one (tokens rotate). */
  token: string | (() => string | Promise<string>);
}

/** The runner side of the desktop channel. Every answer is validated against its schema. */
export interface RunnerClient {
  /** The tasks this runner may claim now. */
  work(signal?: AbortSignal): Promise<z.infer<typeof WorkResponseSchema>>;
  /** Claims a task; 404/409 mean someone else has it or it is gone. */
  claim(taskId: string, signal?: AbortSignal): Promise<Assignment>;
  /**
   * Protocol 3: claims the oldest task this runner may take now (of `kinds`), or null when there
   * is none. From protocol 4 `kinds` may name the host's own kinds (`automation.run`): only then
   * can the answer be one of theirs.
   */
  claimNext(kinds?: readonly WorkKind[], signal?: AbortSignal): Promise<Assignment | null>;
  claimNext(kinds: readonly string[], signal?: AbortSignal): Promise<ClaimedAssignment | null>;
  /** `claimNext`'s whole answer: the assignment, and whether more of those kinds waits (`more`). */
  claimNextReply(kinds?: readonly WorkKind[], signal?: AbortSignal): Promise<ClaimNextResponse & { assignment: Assignment | null }>;
  claimNextReply(kinds: readonly string[], signal?: AbortSignal): Promise<ClaimNextResponse>;
  /** `options.refreshMcp`: ask for a fresh MCP entry for the turn's engine (it nears its expiry). */
  heartbeat(
    taskId: string,
    attempt: number,
    signal?: AbortSignal,
    options?: { refreshMcp?: true } & TaskTrace,
  ): Promise<z.infer<typeof HeartbeatResponseSchema>>;
  postEvents(taskId: string, attempt: number, events: TaskEvent[], signal?: AbortSignal, trace?: TaskTrace): Promise<z.infer<typeof PostEventsResponseSchema>>;
  /** A remote-session task's completion, or (protocol 4) one of a host's kind. */
  complete(
    taskId: string,
    result: CompleteRequest | WorkCompleteRequest,
    signal?: AbortSignal,
    trace?: TaskTrace,
  ): Promise<z.infer<typeof CompleteResponseSchema>>;
  /** Reports what this machine has (its workspaces, their engines and models), replacing the last report. A gateway without the route answers 404. */
  putInventory(inventory: InventoryRequest, signal?: AbortSignal): Promise<z.infer<typeof InventoryResponseSchema>>;
  /** Absolute URL of the SSE wake stream. */
  readonly eventsUrl: string;
  /** The current `Authorization` header value, checked against the token's audience. */
  authorization(): Promise<string>;
  readonly options: RunnerClientOptions;
}

/** The trace a task's posts continue: its assignment's `traceparent`, sent back as the header of that name. */
export interface TaskTrace {
  traceparent?: string | undefined;
}

const traceHeaders = (trace: TaskTrace | undefined): Record<string, string> | undefined =>
  trace?.traceparent ? { traceparent: trace.traceparent } : undefined;

/** `claimNextReply` without its overloads: any kinds, or none (every remote-session kind). */
const replyOf = (client: RunnerClient) => client.claimNextReply as (kinds?: readonly string[], signal?: AbortSignal) => Promise<ClaimNextResponse>;

/** Creates the runner-side client (ky underneath, retries with backoff on transient failures). */
export function createRunnerClient(options: RunnerClientOptions): RunnerClient {
  const routesUrl = routesUrlOf(options.baseUrl, options.prefix);
  const authorization = async () => {
    const token = typeof options.token === "function" ? await options.token() : options.token;
    // The desktop never sends a token to a gateway it was not minted for.
    if (!mayPresentRunnerToken(token, options.baseUrl)) {
      throw new RunnerProtocolError({
        code: "token_audience_mismatch",
        message: "the runner token was minted for another gateway (or for plain http off loopback)",
      });
    }
    return `Bearer ${token}`;
  };
  const call = createHttpTransport({ ...options, routesUrl, authorization });
  const client: RunnerClient = {
    work: (signal) => call("GET", RUNNER_PATHS.work, undefined, WorkResponseSchema, signal),
    claim: async (taskId, signal) => (await call("POST", RUNNER_PATHS.claim(taskId), {}, ClaimResponseSchema, signal)).assignment,
    claimNextReply: ((kinds?: readonly string[], signal?: AbortSignal) =>
      call(
        "POST",
        RUNNER_PATHS.claimNext,
        outgoing(ClaimNextRequestSchema, kinds ? { kinds: [...kinds] } : {}),
        ClaimNextResponseSchema,
        signal,
      )) as RunnerClient["claimNextReply"],
    // The gateway answers a host's kind only to a claim that named it: the overloads say so.
    claimNext: (async (kinds?: readonly string[], signal?: AbortSignal) => (await replyOf(client)(kinds, signal)).assignment) as RunnerClient["claimNext"],
    heartbeat: (taskId, attempt, signal, { refreshMcp, traceparent } = {}) =>
      call(
        "POST",
        RUNNER_PATHS.heartbeat(taskId),
        outgoing(HeartbeatRequestSchema, { attempt, ...(refreshMcp ? { refreshMcp } : {}) }),
        HeartbeatResponseSchema,
        signal,
        traceHeaders({ traceparent }),
      ),
    postEvents: async (taskId, attempt, events, signal, trace) =>
      call(
        "POST",
        RUNNER_PATHS.taskEvents(taskId),
        outgoing(PostEventsRequestSchema, { attempt, events }),
        PostEventsResponseSchema,
        signal,
        traceHeaders(trace),
      ),
    complete: async (taskId, result, signal, trace) =>
      call("POST", RUNNER_PATHS.complete(taskId), outgoing(AnyCompleteRequestSchema, result), CompleteResponseSchema, signal, traceHeaders(trace)),
    putInventory: (inventory, signal) => call("PUT", RUNNER_PATHS.inventory, outgoing(InventoryRequestSchema, inventory), InventoryResponseSchema, signal),
    eventsUrl: routesUrl + RUNNER_PATHS.events,
    authorization,
    options,
  };
  return client;
}

/**
 * `POST token` with the member's own credential: registers this runner and returns a runner
 * token. Called by the signed-in app, never over MCP.
 */
export async function requestRunnerToken(options: {
  baseUrl: string;
  prefix?: string;
  /** The member's credential (a session bearer token of the host). */
  memberToken: string;
  request: TokenMintRequest;
  fetch?: typeof fetch;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<z.infer<typeof TokenMintResponseSchema>> {
  const call = createHttpTransport({
    routesUrl: routesUrlOf(options.baseUrl, options.prefix),
    authorization: async () => `Bearer ${options.memberToken}`,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  const body = outgoing(TokenMintRequestSchema, options.request);
  return call("POST", RUNNER_PATHS.token, body, TokenMintResponseSchema, options.signal);
}

function routesUrlOf(baseUrl: string, prefix = RUNNER_ROUTE_PREFIX): string {
  return baseUrl.replace(/\/+$/, "") + prefix;
}

/** Validates a body before it leaves, so a handler bug fails here with a clear message. */
function outgoing<S extends z.ZodType>(schema: S, body: z.input<S>): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new RunnerProtocolError({
    code: "invalid_request",
    message: `refusing to send an invalid message: ${describeIssues(parsed.error)}`,
  });
}
