import type { ServerResponse } from "node:http";
import { isDeepStrictEqual } from "node:util";
import { sseComment } from "@openwork/remote-session-core/wire";
import type { z } from "zod";
import { type Answer, type Assignment, ClaimNextRequestSchema, ClaimRequestSchema } from "../v1/assignment.js";
import type { Model } from "../v1/common.js";
import { canRunnerTake, grantCapabilities, RUNNER_PROTOCOL_VERSION, STREAM_READY_PROTOCOL, taskRequirements } from "../v1/capabilities.js";
import { type CompleteRequest, CompleteRequestSchema } from "../v1/complete.js";
import { RUNNER_ERROR_STATUS, type RunnerErrorCode } from "../v1/error-body.js";
import { HeartbeatRequestSchema } from "../v1/heartbeat.js";
import type { SessionMcp } from "../v1/session-mcp.js";
import { toMessageIssues } from "../v1/issues.js";
import { RUNNER_ROUTE_PREFIX } from "../v1/paths.js";
import { TokenMintRequestSchema } from "../v1/registration.js";
import { PostEventsRequestSchema, type TaskEvent } from "../v1/task-events.js";
import type { RunnerTokenClaims } from "../v1/token-claims.js";
import { bearerToken, mintRunnerToken, verifyRunnerToken } from "../v1/token.js";
import { wakeFrame } from "../v1/wake-event.js";
import type { RunnerChannelHarness } from "./runner-channel-harness.js";
import { sendJson, startTestServer } from "./http-test-server.js";

/**
 * An in-memory gateway that speaks the runner channel, for this package's own tests. It is a
 * reference of the protocol's rules, not of storage: desktop-target is the real thing and runs
 * the same conformance suite.
 */
interface DoubleTask {
  taskId: string;
  kind: Assignment["kind"];
  title: string;
  prompt: string | null;
  model?: Model;
  pinnedRunnerId: string | null;
  state: "queued" | "claimed" | "done" | "failed" | "cancelled" | "interrupted";
  attempt: number;
  runnerId: string | null;
  leaseExpiresAt: number;
  cancelRequested: boolean;
  events: TaskEvent[];
  completion: CompleteRequest | null;
  /** A respond task's request and answer. */
  respond?: { requestId: string; answer: Answer };
  /** The task its completion claimed for the runner. */
  nextTaskId?: string;
}

const SECRET = "protocol-double-secret-0123456789abcdef";
const MEMBER_TOKEN = "member-token";
const LEASE_MS = 3_000;

class Refusal extends Error {
  constructor(
    readonly code: RunnerErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export async function startProtocolDouble(
  options: {
    heartbeatIntervalMs?: number;
    keepaliveMs?: number;
    /** Issues the MCP entry a turn's assignment (and a heartbeat that asks) carries, as a gateway with session credentials does. */
    sessionMcp?: (taskId: string) => SessionMcp;
    /** Every completion's look for a next task finds none: the gateway's look came before the work was queued (a race). */
    completionsFindNothing?: boolean;
  } = {},
) {
  const tasks = new Map<string, DoubleTask>();
  const notifications: { id: number; taskId: string }[] = [];
  const streams = new Set<ServerResponse>();
  let nextId = 1;
  let baseUrl = "";

  // Our protocol's capabilities live in the registration, not in the token.
  const registered = new Map<string, string[]>();
  const protocols = new Map<string, number>();
  const authenticate = (header: string | undefined): RunnerTokenClaims => {
    const verified = verifyRunnerToken(bearerToken(header), { secret: SECRET, audiences: [baseUrl] });
    if (!verified.ok) throw new Refusal("runner_unauthorized", `runner token refused: ${verified.reason}`);
    return verified.claims;
  };
  const parse = <S extends z.ZodType>(schema: S, body: string): z.infer<S> => {
    let json: unknown;
    try {
      json = body === "" ? {} : JSON.parse(body);
    } catch {
      throw new Refusal("invalid_request", "the body is not JSON");
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Refusal("invalid_request", "the body does not match the protocol", { issues: toMessageIssues(parsed.error) });
    return parsed.data;
  };
  const ownTask = (taskId: string, runner: RunnerTokenClaims): DoubleTask => {
    const task = tasks.get(taskId);
    if (!task || task.runnerId !== runner.r) throw new Refusal("not_found", "no such task");
    return task;
  };
  const settleLease = (task: DoubleTask) => {
    if (task.state === "claimed" && task.leaseExpiresAt <= Date.now()) task.state = "interrupted";
  };
  const leaseHeld = (task: DoubleTask, attempt: number) => {
    settleLease(task);
    return task.state === "claimed" && task.attempt === attempt;
  };
  const eligible = (task: DoubleTask, runner: RunnerTokenClaims) =>
    task.state === "queued" &&
    (task.pinnedRunnerId === null || task.pinnedRunnerId === runner.r) &&
    canRunnerTake({ protocolVersion: RUNNER_PROTOCOL_VERSION, capabilities: registered.get(runner.r) ?? [] }, taskRequirements(task)).ok;
  const claim = (task: DoubleTask, runner: RunnerTokenClaims): Assignment => {
    Object.assign(task, { state: "claimed", attempt: task.attempt + 1, runnerId: runner.r, leaseExpiresAt: Date.now() + LEASE_MS, events: [] });
    return assignmentOf(task);
  };
  const claimNextFor = (runner: RunnerTokenClaims, kinds: readonly string[] | undefined) => {
    const task = [...tasks.values()].find((t) => eligible(t, runner) && (!kinds || kinds.includes(t.kind)));
    return task ? claim(task, runner) : null;
  };
  const assignmentOf = (task: DoubleTask): Assignment => {
    const lease = {
      taskId: task.taskId,
      sessionId: `rs_${task.taskId}`,
      attempt: task.attempt,
      leaseExpiresAt: new Date(task.leaseExpiresAt).toISOString(),
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 1_000,
      model: task.model ?? null,
    };
    if (task.respond) return { ...lease, kind: "remote_session.respond", localSessionId: "ses_1", workspaceId: null, ...task.respond };
    const mcp = options.sessionMcp ? { mcp: options.sessionMcp(task.taskId) } : {};
    return { ...lease, ...mcp, kind: "remote_session.create", title: task.title, prompt: task.prompt, workspaceId: null };
  };
  /** Appends events held-replays-gaps as the gateway does. */
  const append = (task: DoubleTask, events: TaskEvent[]) => {
    const fresh: TaskEvent[] = [];
    for (const event of events) {
      const held = task.events[event.sequence - 1];
      if (held) {
        if (!isDeepStrictEqual(held, event)) throw new Refusal("event_conflict", `event ${event.sequence} differs from the one held`);
      } else if (event.sequence !== task.events.length + fresh.length + 1) {
        throw new Refusal("sequence_gap", `expected sequence ${task.events.length + fresh.length + 1}`);
      } else fresh.push(event);
    }
    task.events.push(...fresh);
  };
  let claimNexts = 0;
  let hintsDropped = false;
  const writeNotification = (stream: ServerResponse, n: { id: number; taskId: string }) =>
    stream.write(wakeFrame({ type: "remote_session_work_available", cursor: String(n.id), taskId: n.taskId }, String(n.id)));

  const routes: Record<
    string,
    (request: { body: string; headers: Record<string, string | string[] | undefined> }, response: ServerResponse, taskId: string) => unknown
  > = {
    "POST /token": ({ body, headers }) => {
      if (headers.authorization !== `Bearer ${MEMBER_TOKEN}`) throw new Refusal("runner_unauthorized", "member sign-in required");
      const request = parse(TokenMintRequestSchema, body);
      const capabilities = grantCapabilities(request.capabilities, request.protocolVersion);
      registered.set(request.runnerId, capabilities);
      // As the gateway: the lower of the two protocols.
      const protocolVersion = Math.min(request.protocolVersion, RUNNER_PROTOCOL_VERSION);
      protocols.set(request.runnerId, protocolVersion);
      const { token, claims } = mintRunnerToken({
        secret: SECRET,
        organizationId: "org_1",
        memberId: "mem_1",
        runnerId: request.runnerId,
        capabilities: [],
        audience: baseUrl,
      });
      return {
        token,
        expiresAt: new Date(claims.e).toISOString(),
        audience: claims.a,
        protocolVersion,
        capabilities,
        eventsPath: `${RUNNER_ROUTE_PREFIX}/events`,
      };
    },
    "GET /work": ({ headers }) => {
      const runner = authenticate(headers.authorization as string | undefined);
      const items = [...tasks.values()].filter((t) => eligible(t, runner)).map((t) => ({ taskId: t.taskId, kind: t.kind }));
      return { items };
    },
    "GET /events": ({ headers }, response) => {
      const runner = authenticate(headers.authorization as string | undefined);
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      response.write(sseComment("open"));
      // Protocol 5: the first event says whether work waits for the runner.
      if ((protocols.get(runner.r) ?? 1) >= STREAM_READY_PROTOCOL) {
        const work = [...tasks.values()].some((t) => eligible(t, runner));
        response.write(wakeFrame({ type: "remote_session_stream_ready", work }));
      }
      const after = Number(headers["last-event-id"] ?? Number.POSITIVE_INFINITY);
      for (const n of notifications) if (n.id > after) writeNotification(response, n);
      streams.add(response);
      const keepalive = setInterval(() => response.write(wakeFrame({ type: "keepalive" })), options.keepaliveMs ?? 15_000);
      response.on("close", () => {
        clearInterval(keepalive);
        streams.delete(response);
      });
      return undefined;
    },
    "POST /claim": ({ body, headers }, _response, taskId) => {
      const runner = authenticate(headers.authorization as string | undefined);
      parse(ClaimRequestSchema, body);
      const task = tasks.get(taskId);
      if (!task || (task.pinnedRunnerId !== null && task.pinnedRunnerId !== runner.r)) throw new Refusal("not_found", "no such task");
      if (!eligible(task, runner)) throw new Refusal("claim_conflict", "the task is not claimable");
      return { assignment: claim(task, runner) };
    },
    "POST /tasks/claim-next": ({ body, headers }) => {
      const runner = authenticate(headers.authorization as string | undefined);
      const { kinds } = parse(ClaimNextRequestSchema, body);
      claimNexts++;
      const assignment = claimNextFor(runner, kinds);
      const more = [...tasks.values()].some((t) => eligible(t, runner) && (!kinds || kinds.includes(t.kind)));
      return { assignment, more: assignment !== null && more };
    },
    "POST /heartbeat": ({ body, headers }, _response, taskId) => {
      const task = ownTask(taskId, authenticate(headers.authorization as string | undefined));
      const { attempt, refreshMcp } = parse(HeartbeatRequestSchema, body);
      const valid = leaseHeld(task, attempt);
      if (valid) task.leaseExpiresAt = Date.now() + LEASE_MS;
      const mcp = valid && refreshMcp && options.sessionMcp ? { mcp: options.sessionMcp(taskId) } : {};
      return {
        attempt,
        leaseValid: valid,
        leaseExpiresAt: valid ? new Date(task.leaseExpiresAt).toISOString() : null,
        cancelRequested: task.cancelRequested,
        ...mcp,
      };
    },
    "POST /events": ({ body, headers }, _response, taskId) => {
      const task = ownTask(taskId, authenticate(headers.authorization as string | undefined));
      const request = parse(PostEventsRequestSchema, body);
      if (!leaseHeld(task, request.attempt)) throw new Refusal("lease_lost", "the lease of this attempt is gone");
      append(task, request.events);
      return { taskId, attempt: request.attempt, nextSequence: task.events.length + 1 };
    },
    "POST /complete": ({ body, headers }, _response, taskId) => {
      const task = ownTask(taskId, authenticate(headers.authorization as string | undefined));
      const runner = authenticate(headers.authorization as string | undefined);
      const { events, next, ...request } = parse(CompleteRequestSchema, body);
      if (task.completion) {
        if (!isDeepStrictEqual(task.completion, request)) throw new Refusal("completion_conflict", "the task was completed differently");
        // A replay hands back the task the first answer carried, while the runner holds it.
        const held = task.nextTaskId ? tasks.get(task.nextTaskId) : undefined;
        const again = held?.state === "claimed" && held.runnerId === runner.r ? assignmentOf(held) : null;
        return { taskId, state: task.state, ...(next ? { next: again } : {}) };
      }
      if (!leaseHeld(task, request.attempt)) throw new Refusal("lease_lost", "the lease of this attempt is gone");
      if (events) append(task, events);
      task.completion = request;
      task.state = request.status;
      if (!next) return { taskId, state: task.state };
      const claimed = options.completionsFindNothing ? null : claimNextFor(runner, next.kinds);
      if (claimed) task.nextTaskId = claimed.taskId;
      return { taskId, state: task.state, next: claimed };
    },
  };

  const server = await startTestServer(async (request, response) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    if (!path.startsWith(RUNNER_ROUTE_PREFIX)) return sendJson(response, 404, { error: "not_found", message: "no such route" });
    const rest = path.slice(RUNNER_ROUTE_PREFIX.length);
    const taskRoute = /^\/tasks\/([^/]+)\/(claim|heartbeat|events|complete)$/.exec(rest);
    const key = `${request.method} ${taskRoute ? `/${taskRoute[2]}` : rest}`;
    const route = routes[key];
    try {
      if (!route) throw new Refusal("not_found", "no such route");
      const result = await route(request, response, decodeURIComponent(taskRoute?.[1] ?? ""));
      if (result !== undefined) sendJson(response, 200, result);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      sendJson(response, RUNNER_ERROR_STATUS[error.code], { error: error.code, message: error.message, ...error.extra });
    }
  });
  baseUrl = server.url;

  const enqueue = (task: Pick<DoubleTask, "kind" | "title" | "prompt" | "model" | "pinnedRunnerId" | "respond">) => {
    const taskId = `rst_${nextId++}`;
    tasks.set(taskId, {
      taskId,
      ...task,
      state: "queued",
      attempt: 0,
      runnerId: null,
      leaseExpiresAt: 0,
      cancelRequested: false,
      events: [],
      completion: null,
    });
    const notification = { id: notifications.length + 1, taskId };
    notifications.push(notification);
    // A dropped hint is one the gateway's bus lost: the task waits for the runner's backstop poll.
    if (!hintsDropped) for (const stream of streams) writeNotification(stream, notification);
    return { taskId };
  };

  const harness: Omit<RunnerChannelHarness, "enqueueCreate"> & {
    /** As the suite's, and the model the session should use. */
    enqueueCreate(input: Parameters<RunnerChannelHarness["enqueueCreate"]>[0] & { model?: Model }): Promise<{ taskId: string }>;
    memberToken: string;
    closeStreams(): void;
    /** From now on, queued tasks send no hint (a bus that loses them), or do again. */
    dropHints(dropped: boolean): void;
    /** Open wake streams. */
    openStreams(): number;
    requests: typeof server.requests;
    /** How many `claim-next` requests it answered. */
    claimNexts(): number;
    /** Queues an answer for the runner (pinned to it), as the gateway does for a waiting turn. */
    enqueueRespond(input: { runnerId: string; requestId: string; answer: Answer }): Promise<{ taskId: string }>;
  } = {
    baseUrl,
    memberToken: MEMBER_TOKEN,
    requests: server.requests,
    registerRunner: async ({ runnerId, capabilities = ["session_create_v1", "session_followup_v1"], protocolVersion = RUNNER_PROTOCOL_VERSION }) => {
      registered.set(runnerId, capabilities);
      protocols.set(runnerId, protocolVersion);
      return { token: mintRunnerToken({ secret: SECRET, organizationId: "org_1", memberId: "mem_1", runnerId, capabilities: [], audience: baseUrl }).token };
    },
    claimNexts: () => claimNexts,
    enqueueCreate: async ({ title, prompt, runnerId, model }) =>
      enqueue({ kind: "remote_session.create", title, prompt, pinnedRunnerId: runnerId ?? null, ...(model ? { model } : {}) }),
    enqueueRespond: async ({ runnerId, requestId, answer }) =>
      enqueue({ kind: "remote_session.respond", title: "", prompt: null, pinnedRunnerId: runnerId, respond: { requestId, answer } }),
    requestCancel: async (taskId) => {
      const task = tasks.get(taskId);
      if (task) task.cancelRequested = true;
    },
    loseLease: async (taskId) => {
      const task = tasks.get(taskId);
      if (task?.state === "claimed") task.state = "interrupted";
    },
    inspect: async (taskId) => {
      const task = tasks.get(taskId);
      if (!task) throw new Error(`no task ${taskId}`);
      settleLease(task);
      return { state: task.state, attempt: task.attempt, events: task.events, completion: task.completion };
    },
    closeStreams: () => {
      for (const stream of streams) stream.destroy();
    },
    dropHints: (dropped) => void (hintsDropped = dropped),
    openStreams: () => streams.size,
    close: () => server.close(),
  };
  return harness;
}
