/**
 * A verified MCP bearer token, in the AuthInfo shape both MCP SDK generations share. `extra`
 * names the caller: `organizationId` and `userId` (whose MCP sessions these are), `memberId` when
 * an active member. Push adds `mcpSessionId` to it for the requests of a stateful session, and
 * `mcpClientCapabilities`: what its client declared at `initialize` (`elicitation`).
 */
export interface PushAuth {
  token: string;
  clientId: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/** What a push hint tells of MCP session `m`: new events to send, its subscriptions changed, or it ended. */
export type PushHintKind = "events" | "subs" | "gone";

/**
 * A hint between processes: "MCP session `m` (of organization `o`) has news of kind `k`". It only
 * says "look again": a lost one is covered by each stream's backstop drain and by `resync`.
 * Delivered, `o` may be "" (a bus whose payload does not carry it); push routes by `m` alone.
 */
export interface PushHint {
  o: string;
  m: string;
  k: PushHintKind;
}

/**
 * What push needs from the process's wake hub, which carries its hints between processes on the
 * hub's bus (so push opens no connection or LISTEN of its own). The desktop target's
 * `createWakeHub` answers all of it.
 */
export interface PushBus {
  /** Resolves when the remote session may have changed (or the bus resynced), after `timeoutMs`, or on abort. */
  waitForSession(sessionId: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** Tells every process that a remote session changed (a move made through the capability). */
  announceSession(organizationId: string, sessionId: string): void;
  /** Sends push hints to every process, this one too (called once the change committed). */
  publishPush(hints: readonly PushHint[]): void;
  /** Delivers every process's push hints, and `resync` when some may have been lost; returns how to stop. */
  subscribePush(handlers: { push(hints: readonly PushHint[]): void; resync(): void }): () => void;
}
