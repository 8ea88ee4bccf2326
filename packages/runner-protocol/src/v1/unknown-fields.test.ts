import { ModelSchema as SessionModelSchema, EngineAnswerSchema, SESSION_LIMITS as S } from "@openwork/remote-session-core/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { objectPaths, unknownKey, unknownValue, withUnknownKey } from "../testing/unknown-fields.js";
import { AnswerSchema, ClaimNextRequestSchema, ClaimNextResponseSchema, ClaimResponseSchema } from "./assignment.js";
import { ModelSchema } from "./common.js";
import { CompleteRequestSchema, CompleteResponseSchema } from "./complete.js";
import { RunnerErrorBodySchema } from "./error-body.js";
import { HeartbeatRequestSchema, HeartbeatResponseSchema } from "./heartbeat.js";
import { InventoryRequestSchema, InventoryResponseSchema } from "./inventory.js";
import { LIMITS } from "./limits.js";
import { TokenMintRequestSchema, TokenMintResponseSchema } from "./registration.js";
import { PostEventsRequestSchema, PostEventsResponseSchema } from "./task-events.js";
import { WakeEventSchema } from "./wake-event.js";
import { WorkResponseSchema } from "./work.js";

const at = "2030-01-01T00:00:00.000Z";
const lease = { taskId: "rst_1", sessionId: "rs_1", attempt: 1, leaseExpiresAt: at, heartbeatIntervalMs: 10_000 };
const model = { providerId: "anthropic", modelId: "claude-sonnet", variant: "high" };
const create = { ...lease, kind: "remote_session.create", model, title: "t", prompt: "p", workspaceId: null, worktree: true };
const send = { ...lease, kind: "remote_session.send", model: null, localSessionId: "ses_1", workspaceId: "ws_1", messageId: "msg_1", prompt: "again" };
const permission = {
  ...lease,
  kind: "remote_session.respond",
  model,
  localSessionId: "ses_1",
  workspaceId: null,
  requestId: "per_1",
  answer: { permission: "once" },
};
const question = { ...permission, requestId: "que_1", answer: { text: "yes" } };

/** Every answer a runner reads, with each shape an assignment can take. */
const REPLIES: [string, z.ZodType, unknown][] = [
  [
    "token answer",
    TokenMintResponseSchema,
    {
      token: "t".repeat(40),
      expiresAt: at,
      audience: "https://gw.test",
      protocolVersion: 3,
      capabilities: ["session_create_v1"],
      eventsPath: "/v1/desktop-runner/events",
    },
  ],
  [
    "work listing",
    WorkResponseSchema,
    {
      items: [
        { taskId: "rst_1", kind: "remote_session.create", deliverBy: at },
        { taskId: "rst_2", kind: "remote_session.send" },
      ],
    },
  ],
  ["claim answer (create, with a model)", ClaimResponseSchema, { assignment: create }],
  ["claim answer (send)", ClaimResponseSchema, { assignment: send }],
  ["claim answer (respond, a permission)", ClaimResponseSchema, { assignment: permission }],
  ["claim-next answer (respond, a question's text)", ClaimNextResponseSchema, { assignment: question }],
  ["claim-next answer (none)", ClaimNextResponseSchema, { assignment: null }],
  ["heartbeat answer", HeartbeatResponseSchema, { attempt: 1, leaseValid: true, leaseExpiresAt: at, cancelRequested: false }],
  ["events answer", PostEventsResponseSchema, { taskId: "rst_1", attempt: 1, nextSequence: 4 }],
  ["complete answer (with the next task)", CompleteResponseSchema, { taskId: "rst_1", state: "done", next: create }],
  ["error body", RunnerErrorBodySchema, { error: "invalid_request", message: "no", retryAfterMs: 10, issues: [{ path: "events.0", message: "bad" }] }],
  ["inventory answer", InventoryResponseSchema, { updatedAt: at }],
  ["wake event", WakeEventSchema, { type: "remote_session_work_available", cursor: "7", taskId: "rst_1" }],
];

/** Requests the runner sends, with nested objects: the gateway refuses a field it does not know, at any depth. */
const REQUESTS: [string, z.ZodType, unknown][] = [
  [
    "token request",
    TokenMintRequestSchema,
    { runnerId: "runner-0001", name: "desk", platform: "linux", appVersion: "1.0.0", protocolVersion: 3, capabilities: [] },
  ],
  [
    "inventory",
    InventoryRequestSchema,
    {
      workspaces: [
        {
          workspaceId: "ws_repo",
          name: "repo",
          active: true,
          engine: "opencode",
          defaultModel: { providerId: "anthropic", modelId: "claude-sonnet" },
          models: [{ providerId: "anthropic", modelId: "claude-sonnet", name: "Claude Sonnet" }],
        },
      ],
    },
  ],
  ["claim-next request", ClaimNextRequestSchema, { kinds: ["remote_session.create"] }],
  ["heartbeat", HeartbeatRequestSchema, { attempt: 1 }],
  [
    "events post",
    PostEventsRequestSchema,
    {
      attempt: 1,
      events: [
        { sequence: 1, type: "input.requested", payload: { requestId: "que_1", kind: "question", title: "t", detail: "d", options: [{ label: "a" }] }, at },
        { sequence: 2, type: "usage", payload: { inputTokens: 1, outputTokens: 2 } },
      ],
    },
  ],
  [
    "completion (failed)",
    CompleteRequestSchema,
    { attempt: 1, status: "failed", error: { code: "model_access_lost", message: "m" }, next: { kinds: ["remote_session.send"] } },
  ],
  [
    "completion (done, with events)",
    CompleteRequestSchema,
    { attempt: 1, status: "done", localSessionId: "ses_1", events: [{ sequence: 3, type: "terminal", payload: { status: "done" } }] },
  ],
];

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("replies from a newer gateway", () => {
  it.each(REPLIES)("%s: an unknown field at every object, at any depth, is ignored and the known fields read the same", (_name, schema, fixture) => {
    const plain = schema.parse(fixture);
    fc.assert(
      fc.property(unknownKey, unknownValue, (key, extra) => {
        const parsed = schema.safeParse(withUnknownKey(fixture, key, extra));
        expect(parsed.success, parsed.error?.message).toBe(true);
        // The known fields read as in the old reply; the new one is passed along untouched.
        expect(json(parsed.data)).toEqual(json(withUnknownKey(plain, key, extra)));
      }),
      { numRuns: 50 },
    );
  });
});

describe("requests", () => {
  it.each(REQUESTS)("%s: an unknown field at any one of its objects is refused", (_name, schema, fixture) => {
    expect(schema.safeParse(fixture).success).toBe(true);
    const paths = objectPaths(fixture);
    fc.assert(
      fc.property(unknownKey, unknownValue, fc.nat(paths.length - 1), (key, extra, index) => {
        const target = JSON.stringify(paths[index]);
        const changed = withUnknownKey(fixture, key, extra, (path) => JSON.stringify(path) === target);
        fc.pre(JSON.stringify(changed) !== JSON.stringify(fixture));
        expect(schema.safeParse(changed).success).toBe(false);
      }),
      { numRuns: 50 },
    );
  });
});

describe("shapes shared with the session model", () => {
  it("are the session model's own definitions, not copies: the model, the answers and their limits", () => {
    expect(ModelSchema).toBe(SessionModelSchema);
    expect(AnswerSchema).toBe(EngineAnswerSchema);
    expect(LIMITS).toMatchObject({
      title: S.title,
      prompt: S.prompt,
      providerId: S.providerId,
      modelId: S.modelId,
      modelVariant: S.modelVariant,
      requestId: S.requestId,
      requestTitle: S.pendingTitle,
      requestDetail: S.pendingDetail,
      requestOptions: S.pendingOptions,
      answerText: S.answerText,
    });
  });
});

describe("a work listing from a newer gateway", () => {
  it("passes over an offer of a kind the runner does not know, and still refuses a malformed offer of a known kind", () => {
    const listing = {
      items: [
        { taskId: "rst_1", kind: "remote_session.fork" },
        { taskId: "rst_2", kind: "remote_session.create" },
      ],
    };
    expect(WorkResponseSchema.parse(listing)).toEqual({ items: [{ taskId: "rst_2", kind: "remote_session.create" }] });
    expect(WorkResponseSchema.safeParse({ items: [{ taskId: "rst 2", kind: "remote_session.create" }] }).success).toBe(false);
    expect(WorkResponseSchema.safeParse({ items: [{ taskId: "rst_2" }] }).success).toBe(false);
  });
});
