import { defineErrorCodes } from "@openwork/remote-session-core";

/**
 * The desktop target's own error codes (den-api's, with den-api's meanings), beside the core's:
 * `fail` builds them, and the target hands `codes` over as its `errorCodes`.
 */
export const DESKTOP_ERRORS = defineErrorCodes({
  /** No desktop of the member able to run the session is online (with the human step). */
  desktop_offline: { retryable: true },
  /** That desktop's app is too old for what was asked. */
  desktop_update_required: { retryable: false },
  /** The pin names none of the member's desktops. */
  unknown_computer: { retryable: false },
  /** The pin (a name) names several desktops. */
  ambiguous_computer: { retryable: false },
  /** The pinned desktop has not been seen lately. */
  computer_offline: { retryable: true },
  /** A request relayed to an OpenWork desktop (read, send, stop) was not picked up in time. */
  desktop_request_expired: { retryable: true },
  /** The OpenWork desktop answered a relayed request with a failure. */
  desktop_request_failed: { retryable: true },
  /** No desktop asked for runs the engine asked for (in the workspace asked for): the refusal lists each desktop's workspaces with their engines. */
  unknown_engine: { retryable: false },
  /** The workspace name names several workspaces of the chosen desktop: the refusal lists them, to name one by its workspaceId. */
  ambiguous_workspace: { retryable: false },
});

export const { fail } = DESKTOP_ERRORS;

/** A code the desktop target answers with: the core's or its own. */
export type DesktopErrorCode = Parameters<typeof fail>[0];
