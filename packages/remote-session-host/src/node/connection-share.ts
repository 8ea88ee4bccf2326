import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

// A connection younger than this may not have had the time to send its request: it is not
// taken for a newer one (at the cap, many new connections at once would take each other's slots).
const FRESH_GRACE_MS = 1_000;

/**
 * Who holds the process's connections, so that reaching the cap costs the one who reached it.
 * A connection that has not sent a whole request yet (idle, slow headers) is nobody's; once it
 * has, it is its credential's (the bearer token's digest, or the peer address without one).
 * At the cap a new connection takes the slot of, first, the oldest connection that is nobody's
 * (if it had a second to send its request), then a connection of the credential holding the
 * most, if that is more than its share (the idle ones first). Only when neither exists is the
 * new connection refused. A connection whose request is a long-lived stream (`isStream`: runner
 * wake streams) leaves the count while it is one: streams have a budget of their own (the host's
 * `ProcessLimits.runnerStreams`), so desktops connected never take the room of requests. The
 * stream slots no stream holds (`maxStreams` less the streams open) are lent to requests: a fleet
 * reconnecting after a restart, whose opens arrive as new connections before they are streams,
 * does not crowd out agents' new connections, and the process never holds more connections than
 * `maxConnections` + `maxStreams`.
 */
export function createConnectionShare(options: {
  maxConnections: number;
  /** Stream slots, lent to requests while no stream holds them. Default 0. */
  maxStreams?: number;
  sharePerCredential: number;
  isStream?: (request: IncomingMessage) => boolean;
  now?: () => number;
}) {
  const now = options.now ?? Date.now;
  const fresh = new Map<Socket, number>();
  const byCredential = new Map<string, Set<Socket>>();
  const credentialOf = new WeakMap<Socket, string>();
  const inFlight = new WeakMap<Socket, number>();
  const streams = new Set<Socket>();
  let open = 0;
  let refused = 0;
  let evicted = 0;
  const cap = () => options.maxConnections + Math.max(0, (options.maxStreams ?? 0) - streams.size);

  /** Takes `socket` out of its credential's set; false when it is in none. */
  const leave = (socket: Socket): boolean => {
    const credential = credentialOf.get(socket);
    const sockets = credential === undefined ? undefined : byCredential.get(credential);
    if (!sockets?.delete(socket)) return false;
    if (sockets.size === 0) byCredential.delete(credential!);
    return true;
  };
  const forget = (socket: Socket) => {
    if (fresh.delete(socket) || leave(socket)) open--;
    else streams.delete(socket);
  };
  const largest = (): Set<Socket> | undefined => {
    let found: Set<Socket> | undefined;
    for (const sockets of byCredential.values()) if (!found || sockets.size > found.size) found = sockets;
    return found && found.size > options.sharePerCredential ? found : undefined;
  };
  const victim = (): Socket | undefined => {
    const oldest = fresh.entries().next();
    if (!oldest.done && now() - oldest.value[1] >= FRESH_GRACE_MS) return oldest.value[0];
    const sockets = largest();
    if (!sockets) return undefined;
    for (const socket of sockets) if (!inFlight.get(socket)) return socket;
    return sockets.values().next().value;
  };

  return {
    /** A new connection: true when it may stay (maybe ending another), false when the process is full. */
    admit(socket: Socket): boolean {
      if (open >= cap()) {
        const taken = victim();
        if (!taken) {
          refused++;
          return false;
        }
        forget(taken);
        evicted++;
        taken.destroy();
      }
      open++;
      fresh.set(socket, now());
      socket.once("close", () => forget(socket));
      return true;
    },
    /** A request's headers arrived: its connection is its credential's until the next request says otherwise. */
    request(request: IncomingMessage, response: ServerResponse) {
      const socket = request.socket;
      // A stream's connection that carries a request again (kept alive) is counted again.
      if (streams.delete(socket)) open++;
      // Not counted any more (ended, or its slot taken): nothing to move.
      else if (!fresh.delete(socket) && !leave(socket)) return;
      if (options.isStream?.(request)) {
        open--;
        streams.add(socket);
        return;
      }
      const credential = credentialKey(request);
      const sockets = byCredential.get(credential) ?? new Set();
      // Added last: each credential's set runs from its least recently used connection.
      sockets.add(socket);
      byCredential.set(credential, sockets);
      credentialOf.set(socket, credential);
      inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
      response.once("close", () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
    },
    /** Connections counted against the cap, those of them that sent no whole request yet, the credentials holding the rest, the streams (not counted), and the connections refused and ended for a newer one so far. */
    stats: () => ({ open, unidentified: fresh.size, credentials: byCredential.size, streams: streams.size, refused, evicted }),
  };
}

/** A request's credential, as a digest (never the token itself), or its peer's address without one. */
function credentialKey(request: IncomingMessage): string {
  const header = request.headers.authorization;
  if (!header) return `peer ${request.socket.remoteAddress ?? ""}`;
  return `bearer ${createHash("sha256").update(header).digest("base64url").slice(0, 22)}`;
}
