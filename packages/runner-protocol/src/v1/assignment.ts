import { EngineAnswerSchema, RespondAnswerReplySchema } from "@openwork/remote-session-core/wire";
import { z } from "zod";
import { AttemptSchema, GatewayIdSchema, LocalIdSchema, ModelReplySchema, RequestIdSchema, TimestampSchema } from "./common.js";
import { LIMITS } from "./limits.js";
import { SessionMcpSchema } from "./session-mcp.js";
import { ClaimKindsSchema, isBuiltInKind, WorkKindNameSchema } from "./work-kinds.js";

// An assignment is a reply: the runner reads it, so every object in it ignores fields a newer
// gateway adds (at any depth), and a new field never costs an old runner its task.

/** `POST tasks/:id/claim` takes no fields; an empty or absent body is fine. */
export const ClaimRequestSchema = z.strictObject({});

const lease = {
  taskId: GatewayIdSchema,
  /** The gateway's session id (`rs_…`) this work belongs to. */
  sessionId: GatewayIdSchema,
  attempt: AttemptSchema,
  leaseExpiresAt: TimestampSchema,
  /** How often the gateway expects a heartbeat. */
  heartbeatIntervalMs: z.int().min(100).max(600_000),
  model: ModelReplySchema.nullable(),
  /**
   * The W3C trace context of the call that queued the work, for a runner that records traces to
   * continue (and to send back as the `traceparent` header of its posts); absent when the
   * gateway records none. A runner that does not know it ignores it.
   */
  traceparent: z.string().max(55).optional(),
};

/** A turn's MCP entry for its engine (see `SessionMcpSchema`); absent from a gateway that issues none. */
const turn = { mcp: SessionMcpSchema.optional() };

/** Create a visible local session, then run the first prompt in it if there is one. */
export const CreateAssignmentSchema = z.looseObject({
  ...lease,
  ...turn,
  kind: z.literal("remote_session.create"),
  title: z.string().max(LIMITS.title),
  prompt: z.string().max(LIMITS.prompt).nullable(),
  /** Create the session in this workspace; null means the runner's active one. */
  workspaceId: LocalIdSchema.nullable(),
  /**
   * Run the session in a new git worktree of the workspace, named after the session, and leave it
   * afterwards. Only a runner that declared `worktree_v1` is offered such a task; absent (no
   * worktree) from a gateway that predates it.
   */
  worktree: z.boolean().optional(),
});

/** A follow-up prompt into the local session an earlier create made on this runner. */
export const SendAssignmentSchema = z.looseObject({
  ...lease,
  ...turn,
  kind: z.literal("remote_session.send"),
  localSessionId: LocalIdSchema,
  workspaceId: LocalIdSchema.nullable(),
  /** Stable id of this prompt, so a runner that replays it can tell it already sent it. */
  messageId: GatewayIdSchema,
  prompt: z.string().min(1).max(LIMITS.prompt),
});

/**
 * An answer for the engine: a permission decision, or the text that answers a question. The
 * session model's one definition (strict, as a caller sends it); an assignment carries its loose
 * reply form.
 */
export const AnswerSchema = EngineAnswerSchema;
export type Answer = z.infer<typeof AnswerSchema>;

/**
 * The human's answer to a request the runner reported (`input.requested`), for the local session
 * whose turn is waiting on it. Short: deliver it to the engine and complete. Claimed even while
 * every slot is busy — the turn it unblocks holds one.
 */
export const RespondAssignmentSchema = z.looseObject({
  ...lease,
  kind: z.literal("remote_session.respond"),
  localSessionId: LocalIdSchema,
  workspaceId: LocalIdSchema.nullable(),
  requestId: RequestIdSchema,
  answer: RespondAnswerReplySchema,
});

/** What a successful claim hands the runner. */
export const AssignmentSchema = z.discriminatedUnion("kind", [CreateAssignmentSchema, SendAssignmentSchema, RespondAssignmentSchema]);
export type Assignment = z.infer<typeof AssignmentSchema>;
export type CreateAssignment = z.infer<typeof CreateAssignmentSchema>;
export type SendAssignment = z.infer<typeof SendAssignmentSchema>;
export type RespondAssignment = z.infer<typeof RespondAssignmentSchema>;

/**
 * An assignment of a work kind the host registered (protocol 4, e.g. `automation.run`): the lease
 * every kind shares, and the kind's own fields in `input`, which the host defines and the
 * runner's handler for that kind reads.
 */
export const WorkAssignmentSchema = z.looseObject({
  taskId: GatewayIdSchema,
  kind: WorkKindNameSchema.refine((kind) => !isBuiltInKind(kind), "a remote-session kind has its own assignment"),
  attempt: AttemptSchema,
  leaseExpiresAt: TimestampSchema,
  heartbeatIntervalMs: lease.heartbeatIntervalMs,
  traceparent: lease.traceparent,
  input: z.record(z.string(), z.unknown()),
});
export type WorkAssignment = z.infer<typeof WorkAssignmentSchema>;

/** Any claimed assignment: a remote-session one, or one of a kind the host registered. */
export const ClaimedAssignmentSchema = z.union([AssignmentSchema, WorkAssignmentSchema]);
export type ClaimedAssignment = Assignment | WorkAssignment;

export const ClaimResponseSchema = z.looseObject({ assignment: AssignmentSchema });
export type ClaimResponse = z.infer<typeof ClaimResponseSchema>;

/**
 * `POST tasks/claim-next` (protocol 3): claim the oldest task this runner may take now, of the
 * kinds it names (default: every remote-session kind it has the capabilities for). One request
 * instead of a work listing and a claim per try, and no claim conflicts: candidates others hold
 * are skipped. From protocol 4 the kinds may include the host's own; a kind the gateway does not
 * serve finds nothing.
 */
export const ClaimNextRequestSchema = z.strictObject({
  kinds: ClaimKindsSchema.optional(),
});
export type ClaimNextRequest = z.infer<typeof ClaimNextRequestSchema>;

/**
 * The claimed assignment, or null: nothing this runner may take now. `more`: another task of the
 * kinds asked still waits, so a runner with a free slot asks again; false: asking again now finds
 * nothing (new work sends a wake-up). Absent from a gateway that predates it: ask until null.
 */
export const ClaimNextResponseSchema = z.looseObject({ assignment: ClaimedAssignmentSchema.nullable(), more: z.boolean().optional() });
export type ClaimNextResponse = z.infer<typeof ClaimNextResponseSchema>;
