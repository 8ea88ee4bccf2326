import { z } from "zod";

// The peer's wire shapes (opencode 1.18 behind openwork-server), loose: a newer worker may add
// fields, and only what the target reads is checked.

export const WorkspacesSchema = z.looseObject({
  items: z.array(z.looseObject({ id: z.string(), name: z.string().optional() })),
  activeId: z.string().nullish(),
});

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

export const PartSchema = z.looseObject({
  id: z.string().optional(),
  type: z.string(),
  text: z.string().optional(),
  synthetic: z.boolean().optional(),
  tool: z.string().optional(),
  callID: z.string().optional(),
  state: z
    .looseObject({
      status: z.string(),
      title: z.string().optional(),
      /** Why a tool call failed; a refused permission's is the engine's own sentence. */
      error: z.string().optional(),
      time: z.looseObject({ start: z.number().optional() }).optional(),
    })
    .optional(),
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

/** `GET permission`: tool calls waiting for the human's approval, every session of the instance. */
export const PermissionRequestsSchema = z.array(
  z.looseObject({
    id: z.string(),
    sessionID: z.string(),
    /** The permission asked for: the tool (`bash`, `edit`, …). */
    permission: z.string(),
    patterns: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()).optional(),
    tool: RequestToolSchema.optional(),
  }),
);
export type PermissionRequest = z.infer<typeof PermissionRequestsSchema>[number];

/** `GET question`: the `question` tool's calls waiting for the human's answer. */
export const QuestionRequestsSchema = z.array(
  z.looseObject({
    id: z.string(),
    sessionID: z.string(),
    questions: z.array(
      z.looseObject({
        question: z.string(),
        header: z.string(),
        options: z.array(z.looseObject({ label: z.string(), description: z.string().optional() })),
      }),
    ),
    tool: RequestToolSchema.optional(),
  }),
);
export type QuestionRequest = z.infer<typeof QuestionRequestsSchema>[number];

/** opencode's error body. */
export const OpencodeErrorSchema = z.looseObject({ name: z.string(), data: z.looseObject({ message: z.string().optional() }).optional() });

/** openwork-server's error body. */
export const OpenworkErrorSchema = z.looseObject({ code: z.string(), message: z.string().optional() });

/** One event of `GET …/opencode/event` (`data: {json}` lines). */
export const EventSchema = z.looseObject({ type: z.string(), properties: z.looseObject({}) });
/** `session.status`'s status. */
export const EventStatusSchema = z.looseObject({ type: z.string(), attempt: z.number().optional(), message: z.string().optional(), next: z.number().optional() });
/** `message.updated`'s info: what says a reply ended. */
export const EventMessageSchema = z.looseObject({ id: z.string(), role: z.string(), time: z.looseObject({ completed: z.number().optional() }).optional(), error: z.unknown().optional() });
/** `message.part.updated`'s part: a text part is announced before its first delta. */
export const EventPartSchema = z.looseObject({ id: z.string(), messageID: z.string(), type: z.string() });
