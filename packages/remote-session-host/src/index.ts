// One composition of remote sessions for a gateway host (den-api, the reference gateway, yours).
export { type HostDesktopOptions, type RemoteSessionHost, type RemoteSessionHostOptions, createRemoteSessionHost } from "./remote-session-host.js";
export { unexpectedErrorResponse } from "./unexpected-error.js";
export { DEFAULT_SCHEMA } from "@openwork/remote-session-core";
