// opencode's HTTP shapes, its message ids, and what its event stream says about a turn: what a
// reader of an opencode engine names (the desktop runner on the machine's own engine). The rest
// (the event schemas, message ids, request descriptions the cloud target reads through
// openwork-server) is in `./internal`, for this repository's sibling packages only.
export {
  MessagesSchema,
  type OpencodeError,
  OpencodeSessionSchema,
  PermissionRequestsSchema,
  QuestionRequestsSchema,
  type ToolState,
} from "./opencode-schemas.js";
export { type PermissionReplyRequest, type PromptAsyncRequest, promptAsyncBody, type QuestionReplyRequest } from "./request-schemas.js";
export type { DescribedRequest, OpencodeSessionUpdate, OpencodeUpdate } from "./opencode-update.js";
export { readOpencodeEvent } from "./read-opencode-event.js";
