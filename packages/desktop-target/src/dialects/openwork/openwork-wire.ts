import { BODY_TOO_LARGE_HEADERS } from "@openwork/remote-session-core/internal";
import { OPENWORK_CAPABILITIES, PLATFORMS, toMessageIssues } from "@openwork/runner-protocol/internal";
import { z } from "zod";

// OpenWork's runner-channel wire shapes (the wire spec's §2): objects non-strict (unknown members
// dropped), timestamps in epoch milliseconds, error bodies `{ error, message? }`.

const epochMs = z.int().nonnegative();
const trimmed = (min: number, max: number) => z.string().trim().min(min).max(max);

/** `POST /v1/automation-runners/token` (and `/v1/session-runners/token`). */
export const OpenworkMintSchema = z.object({
  runnerId: trimmed(8, 160),
  protocolVersion: z.literal(1),
  supportedExecutionTargets: z.tuple([z.literal("desktop")]),
  capabilities: z.array(z.enum(OPENWORK_CAPABILITIES)).max(5).default([]),
  appVersion: trimmed(1, 80),
  platform: z.enum(PLATFORMS),
  concurrency: z.int().min(1).max(4),
});

export const EmptyBodySchema = z.object({});
export const RunHeartbeatSchema = z.object({ attempt: z.int().min(1) });
export const RunEventSchema = z.object({
  attempt: z.int().min(1),
  sequence: z.int().min(1),
  type: z.enum(["user", "assistant", "capability_search", "capability_execution", "usage", "warning", "terminal"]),
  payload: z.record(z.string(), z.unknown()),
  createdAt: epochMs,
});
export const RunCompleteSchema = z.object({
  attempt: z.int().min(1),
  status: z.enum(["succeeded", "failed", "cancelled"]),
  sessionId: z.string().min(1).max(240).nullish(),
  workspaceId: z.string().min(1).max(240).nullish(),
  resultSummary: z.string().max(20_000).nullish(),
  usage: z.unknown().optional(),
  error: z.object({ code: z.string().min(1).max(60), message: trimmed(1, 2_000), retryable: z.boolean() }).nullish(),
});

const codeAndMessage = z.object({ code: z.string().min(1).max(60), message: z.string().min(1).max(2_000) });
const model = z.object({ providerId: z.string().min(1).max(160), modelId: z.string().min(1).max(160), variant: z.string().max(60).nullish() });

export const CommandCompleteSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("delivered"),
    sessionId: z.string().min(1).max(240),
    workspaceId: z.string().min(1).max(240),
    resultSummary: z.string().max(4_096).nullish(),
  }),
  z
    .object({
      status: z.literal("failed"),
      error: codeAndMessage,
      resultSummary: z.string().max(4_096).nullish(),
      sessionId: z.unknown().optional(),
      workspaceId: z.unknown().optional(),
    })
    .refine((b) => b.sessionId === undefined && b.workspaceId === undefined, "a failed command carries no session ids"),
]);

export const SessionReportSchema = z.object({
  status: z.enum(["running", "waiting", "idle", "error"]),
  waitingFor: z.enum(["permission", "question"]).nullish(),
  engine: z.enum(["v1", "v2"]).optional(),
  model: model.nullish(),
  finalText: z.string().max(20_000).optional(),
  error: codeAndMessage.nullish(),
  messageCount: z.int().nonnegative().optional(),
  observedAt: epochMs,
});

export const RequestCompleteSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("done"), outcome: z.object({ action: z.enum(["read", "send", "stop"]), result: z.record(z.string(), z.unknown()) }) }),
  z.object({ status: z.literal("failed"), error: codeAndMessage }),
]);

const toolCall = z.object({
  id: z.string().max(240),
  name: z.string().max(240),
  status: z.string().max(60).nullable(),
  input: z.string().max(2_000).nullish(),
  output: z.string().max(2_000).nullish(),
  error: z.string().max(2_000).nullish(),
  truncated: z.boolean().optional(),
});
export const ReadResultMessageSchema = z.object({
  id: z.string().min(1).max(240),
  role: z.enum(["user", "assistant"]),
  createdAt: epochMs.nullable(),
  text: z.string().max(20_000),
  truncated: z.boolean(),
  toolCalls: z.array(toolCall).max(200),
  error: codeAndMessage.nullish(),
});

/** What an OpenWork desktop answers to each relayed request (the wire spec's §2.7). */
export const RequestResultSchemas = {
  read: z.object({
    historyScope: z.enum(["full", "context"]).optional(),
    title: z.string().max(240).nullable(),
    status: z.enum(["running", "waiting", "idle", "error"]),
    waitingFor: z.enum(["permission", "question"]).nullable(),
    lastError: codeAndMessage.nullable(),
    messageCount: z.int().nonnegative(),
    from: z.enum(["start", "end"]),
    messages: z.array(ReadResultMessageSchema).max(100),
    nextCursor: z.string().max(160).nullable(),
  }),
  send: z.object({ messageId: z.string().max(160).nullable(), alreadyPresent: z.boolean() }),
  stop: z.object({ stopped: z.boolean(), reason: z.enum(["different_turn"]).nullable() }),
} as const;
export type RelayedReadResult = z.infer<typeof RequestResultSchemas.read>;

/**
 * `PUT /v1/automation-runner/inventory`: what a desktop has — its computer, and its workspaces by
 * OpenWork's `workspaceId` with their engine and models. Non-strict at every depth, as den-api.
 */
export const InventorySchema = z
  .object({
    computer: z
      .object({ label: trimmed(1, 120).optional(), platform: z.string().max(20).optional(), appVersion: trimmed(1, 80).optional() })
      .loose()
      .optional(),
    workspaces: z
      .array(
        z
          .object({
            workspaceId: z.string().min(1).max(240),
            name: z.string().min(1).max(120).optional(),
            active: z.boolean().optional(),
            engine: z.enum(["v1", "v2"]).nullish(),
            defaultModel: model.loose().nullish(),
            models: z
              .array(z.object({ providerId: z.string().min(1).max(160), modelId: z.string().min(1).max(160), name: z.string().max(200).optional() }).loose())
              .max(200)
              .optional(),
          })
          .loose(),
      )
      .max(50)
      .optional(),
  })
  .loose();

/** Ids in paths: 1–160 characters. */
export const PathIdSchema = z.string().min(1).max(160);

/** A refusal in OpenWork's words: its status and error code. */
export class OpenworkRefusal extends Error {
  override readonly name = "OpenworkRefusal";
  constructor(
    readonly status: number,
    readonly code: string,
    message?: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message ?? code);
  }
}

export function openworkJson(status: number, body: unknown): Response {
  const close = status === 413 ? BODY_TOO_LARGE_HEADERS : {};
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...close } });
}

export function refusalBody(refusal: OpenworkRefusal): Response {
  return openworkJson(refusal.status, { error: refusal.code, ...(refusal.message !== refusal.code ? { message: refusal.message } : {}), ...refusal.extra });
}

/** Parses with a schema or refuses as den-api does: 400 `invalid_request` with the issues as `details`. */
export function parseOpenwork<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new OpenworkRefusal(400, "invalid_request", "the request does not match the protocol", { details: toMessageIssues(parsed.error) });
}
