import { z } from "zod";
import { DEFAULT_TITLE, SESSION_LIMITS as L } from "./limits.js";
import { ModelSchema } from "./wire/model.js";

export { ModelSchema, type Model } from "./wire/model.js";

const IdempotencyKeySchema = z.string().min(1).max(L.idempotencyKey);
const PromptSchema = z.string().min(1).max(L.prompt);

/** A workspace id: a strict pattern, so it never reaches a URL path as anything but one segment. */
export const WorkspaceIdSchema = z
  .string()
  .min(1)
  .max(L.workspaceId)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "letters, digits, _ and - only");

/** The arguments every target's `create` takes, validated; a target adds its own (`Target.createArguments`). */
export const CreateSessionInputSchema = z.strictObject({
  title: z.string().trim().min(1).max(L.title).default(DEFAULT_TITLE),
  prompt: PromptSchema.optional(),
  model: ModelSchema.optional(),
  idempotencyKey: IdempotencyKeySchema.optional(),
});
export type CreateSessionInput = z.output<typeof CreateSessionInputSchema>;

/** A message id a caller fixes for a prompt, so a target can tell a replay (OpenWork's rule). */
export const MessageIdSchema = z
  .string()
  .max(L.idempotencyKey)
  .regex(/^msg_[A-Za-z0-9]+$/, "msg_ followed by letters and digits");

export const SendInputSchema = z.strictObject({
  prompt: PromptSchema,
  /** The prompt's id; a target that already holds it reports `alreadyPresent` instead of sending twice. */
  messageId: MessageIdSchema.optional(),
  idempotencyKey: IdempotencyKeySchema.optional(),
});
export type SendInput = z.output<typeof SendInputSchema>;

export const ReadInputSchema = z.strictObject({
  cursor: z.string().min(1).max(L.cursor).optional(),
  /** Without a cursor: read from the first message (`start`, the default) or the last `limit` (`end`), as OpenWork's read. */
  from: z.enum(["start", "end"]).optional(),
  limit: z.int().min(1).max(L.readLimitMax).default(L.readLimitDefault),
  waitMs: z.int().min(0).max(L.waitMsMax).default(0),
});
export type ReadInput = z.output<typeof ReadInputSchema>;

export const ListInputSchema = z.strictObject({
  target: z.string().min(1).max(32).optional(),
  /** Only the sessions this session started (through its engine's session credential). */
  spawnedBy: z
    .string()
    .regex(/^rs_[0-9a-z]{26}$/, "a sessionId (rs_…)")
    .optional()
    .describe("Only the sessions this session started (its engine's own creates)."),
  limit: z.int().min(1).max(L.listLimitMax).default(L.listLimitDefault),
  cursor: z.string().min(1).max(L.cursor).optional(),
});
export type ListInput = z.output<typeof ListInputSchema>;
