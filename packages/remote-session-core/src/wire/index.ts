// The wire shapes other contracts share with the session model (the runner channel's model,
// answers and limits, and the SSE framing every event stream writes): zod and eventsource-parser only, no node: module,
// so a desktop runner can load them.
export { SESSION_LIMITS } from "../limits.js";
export { ModelSchema, type Model, ModelReplySchema } from "./model.js";
export { EngineAnswerSchema, RespondAnswerSchema, RespondAnswerReplySchema, type RespondAnswer } from "./respond-answer.js";
export { sseFrame, sseComment } from "./sse-frame.js";
export { SseFieldError } from "./sse-field-error.js";
export { followSse, type SseTimers } from "./follow-sse.js";
export { SseSilentError } from "./sse-silent-error.js";
