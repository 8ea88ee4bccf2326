export const ACTIONS = ["create", "send", "read", "respond", "list", "stop", "targets"] as const;
export type Action = (typeof ACTIONS)[number];

/** A name this source claims, in den-api's parsed-capability shape. */
export interface ParsedCapability {
  kind: "remoteSession";
  /** The name as the caller wrote it. */
  name: string;
  action: Action;
}

/**
 * The canonical name of an action, `remote-session:<action>`. The colon matters: den-api's
 * catalog source claims every name without one, so only such names reach this source there.
 */
export const capabilityName = (action: Action) => `remote-session:${action}`;

/** Claims `remote-session:<action>` and the proposal's spelling `remoteSession.<action>`; anything else is null. */
export function parseName(name: string): ParsedCapability | null {
  const match = /^(?:remote-session:|remoteSession\.)([a-z]+)$/.exec(name);
  const action = match?.[1];
  return action !== undefined && (ACTIONS as readonly string[]).includes(action) ? { kind: "remoteSession", name, action: action as Action } : null;
}
