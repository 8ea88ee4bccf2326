import { z } from "zod";

// opencode's replies (1.18, served by itself or behind openwork-server's mount), loose at every
// depth: a newer engine may add members anywhere, and only what a reader uses is checked. A member
// only some readers use (a tool's input, a step's tokens) falls back to undefined when a newer
// engine shapes it otherwise, rather than failing the whole reply.

export const OpencodeSessionSchema = z.looseObject({
  id: z.string(),
  title: z.string().optional(),
});

export const MessageInfoSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string().optional(),
  role: z.enum(["user", "assistant"]),
  parentID: z.string().optional(),
  time: z.looseObject({ created: z.number(), completed: z.number().optional() }),
  finish: z.string().optional(),
  error: z.looseObject({ name: z.string(), data: z.looseObject({ message: z.string().optional() }).optional() }).optional(),
});

/** A `todowrite` call's list, in its input and its metadata. */
const TodosSchema = z.array(z.looseObject({ content: z.string().optional(), status: z.string().optional() }));

export const ToolStateSchema = z.looseObject({
  status: z.string(),
  title: z.string().optional(),
  /** Why a tool call failed; a refused permission's is the engine's own sentence. */
  error: z.string().optional(),
  time: z.looseObject({ start: z.number().optional() }).optional(),
  input: z.record(z.string(), z.unknown()).optional().catch(undefined),
  output: z.string().optional().catch(undefined),
  metadata: z
    .looseObject({ todos: TodosSchema.optional().catch(undefined) })
    .optional()
    .catch(undefined),
});
export type ToolState = z.infer<typeof ToolStateSchema>;

export const PartSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string(),
  text: z.string().optional(),
  synthetic: z.boolean().optional(),
  tool: z.string().optional(),
  callID: z.string().optional(),
  state: ToolStateSchema.optional(),
  /** A `step-finish` part's usage (`stepTokens` reads it). */
  tokens: z
    .looseObject({
      input: z.number().optional(),
      output: z.number().optional(),
      reasoning: z.number().optional().catch(undefined),
      cache: z.looseObject({ read: z.number().optional(), write: z.number().optional() }).optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
  /** A `step-finish` part's cost, in dollars. */
  cost: z.number().optional().catch(undefined),
});

export const MessageWithPartsSchema = z.looseObject({ info: MessageInfoSchema, parts: z.array(PartSchema) });
export type MessageWithParts = z.infer<typeof MessageWithPartsSchema>;

export const MessagesSchema = z.array(MessageWithPartsSchema);

const StatusEntrySchema = z.looseObject({ type: z.string() });

/**
 * `GET session/status`: only sessions that are not idle are listed. Each entry is read on its
 * own: one a newer engine shapes otherwise (or a member that is not a session) is left out
 * rather than failing every session's read.
 */
export const StatusMapSchema = z.record(z.string(), z.unknown()).transform((map) => {
  const statuses: Record<string, z.infer<typeof StatusEntrySchema>> = {};
  for (const [id, entry] of Object.entries(map)) {
    const parsed = StatusEntrySchema.safeParse(entry);
    if (parsed.success) statuses[id] = parsed.data;
  }
  return statuses;
});

const RequestToolSchema = z.looseObject({ messageID: z.string(), callID: z.string() });

/** A tool call waiting for the human's approval (`GET permission`'s items, `permission.asked`'s properties). */
export const PermissionRequestSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  /** The permission asked for: the tool (`bash`, `edit`, …). */
  permission: z.string(),
  patterns: z.array(z.string()).default([]),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tool: RequestToolSchema.optional(),
});
export type PermissionRequest = z.infer<typeof PermissionRequestSchema>;

/** `GET permission`: tool calls waiting for the human's approval, every session of the instance. */
export const PermissionRequestsSchema = z.array(PermissionRequestSchema);

/** The `question` tool's call waiting for the human's answer (`GET question`'s items, `question.asked`'s properties). */
export const QuestionRequestSchema = z.looseObject({
  id: z.string(),
  sessionID: z.string(),
  questions: z.array(
    z.looseObject({
      question: z.string(),
      header: z.string(),
      options: z.array(z.looseObject({ label: z.string(), description: z.string().optional() })).default([]),
    }),
  ),
  tool: RequestToolSchema.optional(),
});
export type QuestionRequest = z.infer<typeof QuestionRequestSchema>;

/** `GET question`: the `question` tool's calls waiting for the human's answer. */
export const QuestionRequestsSchema = z.array(QuestionRequestSchema);

/** opencode's error: an error body, a failed message's `error`, `session.error`'s `error`. */
export const OpencodeErrorSchema = z.looseObject({ name: z.string(), data: z.looseObject({ message: z.string().optional() }).optional() });
export type OpencodeError = z.infer<typeof OpencodeErrorSchema>;

/** One event of `GET event` (`data: {json}` lines). */
export const EventSchema = z.looseObject({ type: z.string(), properties: z.looseObject({}).default({}) });
export type OpencodeEvent = z.infer<typeof EventSchema>;
/** `session.status`'s status. */
export const EventStatusSchema = z.looseObject({
  type: z.string(),
  attempt: z.number().optional(),
  message: z.string().optional(),
  next: z.number().optional(),
});
/** `message.updated`'s info: what says a reply ended. */
export const EventMessageSchema = z.looseObject({
  id: z.string(),
  role: z.string(),
  time: z.looseObject({ completed: z.number().optional() }).optional(),
  error: z.unknown().optional(),
});
/** `message.part.updated`'s part: a text part is announced before its first delta; a tool's as it moves. */
export const EventPartSchema = PartSchema.extend({ id: z.string(), messageID: z.string() });

/**
 * A step's tokens as a budget counts them: in, with what the cache read and wrote (tokens the
 * model took in all the same), and out, with its reasoning (billed as output).
 */
export function stepTokens(tokens: NonNullable<z.infer<typeof PartSchema>["tokens"]>): { inputTokens: number; outputTokens: number } {
  const whole = (n: number | undefined) => (Number.isFinite(n) && n! > 0 ? Math.round(n!) : 0);
  return {
    inputTokens: whole(tokens.input) + whole(tokens.cache?.read) + whole(tokens.cache?.write),
    outputTokens: whole(tokens.output) + whole(tokens.reasoning),
  };
}
