export const ACTIONS = ["create", "send", "read", "list", "stop", "targets"] as const;
export type Action = (typeof ACTIONS)[number];

/** The canonical capability name of an action. */
export const capabilityName = (action: Action) => `remoteSession.${action}`;

/** Accepts `remoteSession.<action>` and OpenWork's spelling `remote-session:<action>`. */
export function parseName(name: string): { action: Action } | null {
  const match = /^(?:remoteSession\.|remote-session:)([a-z]+)$/.exec(name);
  const action = match?.[1] as Action | undefined;
  return action && (ACTIONS as readonly string[]).includes(action) ? { action } : null;
}
