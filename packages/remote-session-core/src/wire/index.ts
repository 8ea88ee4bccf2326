// The wire shapes other contracts share with the session model (the runner channel's model,
// answers and limits, and the SSE framing every event stream writes): zod and eventsource-parser only, no node: module,
// so a desktop runner can load them.
export { SESSION_LIMITS, DEFAULT_TITLE } from "../limits.js";
export { ModelSchema, type Model, ModelReplySchema } from "./model.js";
export { RespondAnswerSchema, type RespondAnswer, RespondAnswerReplySchema } from "./respond-answer.js";
export { sseFrame, sseComment, type SseMessage } from "./sse-frame.js";
export { SseFieldError, type SseField } from "./sse-field-error.js";
export { followSse, type FollowSseOptions, type SseTimers } from "./follow-sse.js";
export { SseSilentError } from "./sse-silent-error.js";
export { BODY_TOO_LARGE_HEADERS, BodyTooLarge, MCP_BODY_BYTES, readBodyWithin, withBodyWithin } from "./read-body-within.js";
