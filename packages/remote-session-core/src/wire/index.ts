// The wire shapes other contracts share with the session model (the runner channel's model,
// answers and limits): zod only, no node: module, so a desktop runner can load them.
export { SESSION_LIMITS, DEFAULT_TITLE } from "../limits.js";
export { ModelSchema, type Model, ModelReplySchema } from "./model.js";
export { RespondAnswerSchema, type RespondAnswer, RespondAnswerReplySchema } from "./respond-answer.js";
