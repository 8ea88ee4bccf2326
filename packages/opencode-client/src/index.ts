// opencode's HTTP shapes, its message ids, and what its event stream says about a turn: shared by
// every reader of an opencode engine (the cloud target through openwork-server, the desktop runner
// on the machine's own engine).
export {
  EventMessageSchema,
  EventPartSchema,
  EventSchema,
  EventStatusSchema,
  MessageInfoSchema,
  MessagesSchema,
  type MessageWithParts,
  MessageWithPartsSchema,
  type OpencodeError,
  OpencodeErrorSchema,
  type OpencodeEvent,
  OpencodeSessionSchema,
  PartSchema,
  type PermissionRequest,
  PermissionRequestSchema,
  PermissionRequestsSchema,
  type QuestionRequest,
  QuestionRequestSchema,
  QuestionRequestsSchema,
  StatusMapSchema,
  type ToolState,
  ToolStateSchema,
} from "./opencode-schemas.js";
export {
  type CreateSessionRequest,
  CreateSessionRequestSchema,
  type PermissionReplyRequest,
  PermissionReplyRequestSchema,
  type PromptAsyncRequest,
  PromptAsyncRequestSchema,
  promptAsyncBody,
  type QuestionReplyRequest,
  QuestionReplyRequestSchema,
} from "./request-schemas.js";
export type { DescribedPermission, DescribedQuestion, DescribedRequest, OpencodeSessionUpdate, OpencodeUpdate } from "./opencode-update.js";
export { readOpencodeEvent } from "./read-opencode-event.js";
export { describePermission, describeQuestion } from "./describe-request.js";
export { newOpencodeMessageId } from "./opencode-message-id.js";
