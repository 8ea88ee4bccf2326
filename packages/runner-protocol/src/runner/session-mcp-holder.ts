import type { SessionMcp } from "../v1/session-mcp.js";

/** What a task handler sees of its turn's MCP entry: the latest one, and word when a fresher one replaces it. */
export interface SessionMcpView {
  /** The entry for the turn's engine; undefined when the gateway issues none. */
  current(): SessionMcp | undefined;
  /** Called with each fresher entry (the heartbeats refresh it before it expires). */
  onChange(listener: (mcp: SessionMcp) => void): void;
}

/** The turn's entry as the heartbeat loop keeps it. */
export interface SessionMcpHolder extends SessionMcpView {
  /** Whether the next heartbeat should ask for a fresh entry: a third of its lifetime or less is left. */
  due(): boolean;
  replace(mcp: SessionMcp): void;
}

/** Holds the MCP entry an assignment brought, for one attempt. */
export function holdSessionMcp(initial: SessionMcp | undefined, now: () => number = Date.now): SessionMcpHolder {
  let entry = initial;
  // The lifetime as first seen: clocks of runner and gateway differ, so measure it on arrival here.
  let lifetimeMs = entry ? Date.parse(entry.expiresAt) - now() : 0;
  const listeners: ((mcp: SessionMcp) => void)[] = [];
  return {
    current: () => entry,
    onChange: (listener) => void listeners.push(listener),
    due: () => entry !== undefined && Date.parse(entry.expiresAt) - now() <= lifetimeMs / 3,
    replace: (mcp) => {
      entry = mcp;
      lifetimeMs = Math.max(lifetimeMs, Date.parse(mcp.expiresAt) - now());
      for (const listener of listeners) listener(mcp);
    },
  };
}
