// The answer to an error nobody expected, on every route the gateway serves: the host package's
// (a typed `internal_error` body whose `referenceId` is in exactly one log line, never the error's text).
export { unexpectedErrorResponse } from "@openwork/remote-session-host";
