// For this repository's sibling packages (the cloud target) only: the rest of opencode's shapes,
// its message ids and the descriptions of its pending requests. No stability promise: names here
// may change or go in any release. A runner needs none of them (it imports `.`).
export {
  EventMessageSchema,
  EventPartSchema,
  EventSchema,
  EventStatusSchema,
  type MessageWithParts,
  OpencodeErrorSchema,
  type PermissionRequest,
  type QuestionRequest,
  StatusMapSchema,
  stepTokens,
} from "./opencode-schemas.js";
export { describePermission, describeQuestion } from "./describe-request.js";
export { newOpencodeMessageId } from "./opencode-message-id.js";
