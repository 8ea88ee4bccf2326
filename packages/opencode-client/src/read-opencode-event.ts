import { describePermission, describeQuestion } from "./describe-request.js";
import {
  EventMessageSchema,
  EventPartSchema,
  EventSchema,
  EventStatusSchema,
  OpencodeErrorSchema,
  type OpencodeEvent,
  PermissionRequestSchema,
  QuestionRequestSchema,
  stepTokens,
} from "./opencode-schemas.js";
import type { OpencodeUpdate } from "./opencode-update.js";

/** One message of opencode's event stream (its `data`), read: null when it is no event or one nobody reads. */
export function readOpencodeEvent(data: string): OpencodeUpdate | null {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return null;
  }
  const event = EventSchema.safeParse(json);
  return event.success ? updateOf(event.data) : null;
}

/** What an event says about its session; a member it cannot read makes the event say nothing, never throw. */
export function updateOf(event: OpencodeEvent): OpencodeUpdate | null {
  if (event.type === "server.connected") return { type: "connected" };
  const props = event.properties;
  const sessionId = props.sessionID;
  if (typeof sessionId !== "string") return null;
  switch (event.type) {
    case "message.part.updated":
      return partUpdate(sessionId, props.part);
    case "message.part.delta":
      if (props.field !== "text" || typeof props.messageID !== "string" || typeof props.delta !== "string") return null;
      return {
        type: "text-delta",
        sessionId,
        messageId: props.messageID,
        partId: typeof props.partID === "string" ? props.partID : undefined,
        delta: props.delta,
      };
    case "message.updated": {
      const info = EventMessageSchema.safeParse(props.info);
      if (!info.success) return null;
      const { id, role, time, error } = info.data;
      return { type: "message", sessionId, messageId: id, role, ended: role === "assistant" && (time?.completed !== undefined || error !== undefined) };
    }
    case "session.error": {
      const error = OpencodeErrorSchema.safeParse(props.error);
      return { type: "error", sessionId, error: error.success ? error.data : null };
    }
    case "session.status": {
      const status = EventStatusSchema.safeParse(props.status);
      return status.success ? { type: "status", sessionId, status: status.data } : null;
    }
    case "session.idle":
      return { type: "idle", sessionId };
    case "permission.asked": {
      const request = PermissionRequestSchema.safeParse(props);
      return { type: "asked", sessionId, request: request.success ? describePermission(request.data) : null };
    }
    case "question.asked": {
      const request = QuestionRequestSchema.safeParse(props);
      return { type: "asked", sessionId, request: request.success ? describeQuestion(request.data) : null };
    }
    case "permission.replied":
    case "question.replied":
    case "question.rejected":
      return { type: "resolved", sessionId, requestId: typeof props.requestID === "string" ? props.requestID : null };
    default:
      return null;
  }
}

/** `message.part.updated`: a text part's creation, a tool call's progress, or a step's usage. */
function partUpdate(sessionId: string, part: unknown): OpencodeUpdate | null {
  const parsed = EventPartSchema.safeParse(part);
  if (!parsed.success) return null;
  const { id, messageID: messageId, type, tool, callID, state, tokens } = parsed.data;
  if (type === "text") return { type: "text-part", sessionId, messageId, partId: id };
  if (type === "tool" && tool && callID && state) return { type: "tool", sessionId, messageId, callId: callID, tool, state };
  if (type === "step-finish" && tokens) return { type: "usage", sessionId, messageId, partId: id, ...stepTokens(tokens), cost: parsed.data.cost };
  return null;
}
