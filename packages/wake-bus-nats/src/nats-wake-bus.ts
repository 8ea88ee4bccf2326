import type { WakeBus } from "@openwork/desktop-target";
import { readPush, readRevokes, readSessions, readWakes, renderPush, type HintBatch, type WakeBusHandlers } from "@openwork/desktop-target/internal";
import { connect, type ConnectionOptions, type NatsConnection, type Subscription } from "@nats-io/transport-node";

export interface NatsWakeBusOptions {
  /** An open connection; the host owns it (credentials, TLS, reconnect policy) and closes it. */
  connection: NatsConnection;
  /** The subjects' first tokens. Default `openwork.wake`. */
  subjectPrefix?: string;
  /** How long a publish waits for the server to acknowledge it (a flush). Default 2 s. */
  publishTimeoutMs?: number;
}

/** Items per message: 1 000 wake notices are ~150 KB, under NATS's default 1 MB max payload. */
const PER_MESSAGE = 1_000;

/**
 * The `WakeBus` on NATS: hints leave the gateway through NATS instead of PostgreSQL, so no
 * commit of the primary ever waits on its notify lock, and a process's listening costs the
 * database nothing. Subjects are per organization — `<prefix>.task.<org>` (a JSON array of wake
 * notices), `<prefix>.session.<org>` (session ids joined with commas) and `<prefix>.push.<org>`
 * (push hints, `<mcpSessionId>:<kind>` joined with commas) and `<prefix>.revoke.<org>` (revoked
 * runners, a JSON array of `{ o, m, r }`: the registration caches forget them) — so a process serving
 * some organizations can subscribe to theirs alone. Core NATS delivers at most once: a hint lost
 * while the server is away is covered by the runners' poll and replay, and on reconnecting the
 * bus tells the hub to resync.
 */
export function natsWakeBus(options: NatsWakeBusOptions): WakeBus {
  const nc = options.connection;
  const prefix = options.subjectPrefix ?? "openwork.wake";
  const timeoutMs = options.publishTimeoutMs ?? 2_000;
  const subscriptions: Subscription[] = [];
  return {
    name: `NATS (${prefix})`,
    publish: async (batch) => {
      for (const [subject, payload] of messagesOf(prefix, batch)) nc.publish(subject, payload);
      await withTimeout(nc.flush(), timeoutMs, `NATS did not acknowledge a publish within ${timeoutMs} ms`);
    },
    subscribe: async (handlers) => {
      subscriptions.push(
        nc.subscribe(`${prefix}.task.*`, {
          callback: (error, msg) => (error ? handlers.unreadable(String(error)) : readWakes(msg.string(), handlers, msg.subject)),
        }),
        nc.subscribe(`${prefix}.session.*`, { callback: (error, msg) => (error ? handlers.unreadable(String(error)) : readSessions(msg.string(), handlers)) }),
        nc.subscribe(`${prefix}.push.*`, {
          callback: (error, msg) => (error ? handlers.unreadable(String(error)) : readPush(msg.string(), organizationOf(msg.subject), handlers, msg.subject)),
        }),
        nc.subscribe(`${prefix}.revoke.*`, {
          callback: (error, msg) => (error ? handlers.unreadable(String(error)) : readRevokes(msg.string(), handlers, msg.subject)),
        }),
      );
      void resyncOnReconnect(nc, handlers);
      // The server has the subscriptions once it answers a flush.
      await nc.flush();
    },
    close: async () => {
      for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
    },
  };
}

/**
 * Connects to NATS and returns a bus that owns the connection (closed with the bus). It
 * reconnects forever, every 250 ms: a bus that gave up would leave the gateway on its slow poll.
 * Rejects with the server list when no server answers at start.
 */
export async function connectNatsWakeBus(options: {
  servers: string | string[];
  subjectPrefix?: string;
  publishTimeoutMs?: number;
  connection?: Partial<ConnectionOptions>;
}): Promise<WakeBus> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: options.servers, name: "openwork-wake-bus", maxReconnectAttempts: -1, reconnectTimeWait: 250, ...options.connection });
  } catch (error) {
    throw new Error(`cannot reach NATS at ${[options.servers].flat().join(", ")}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const bus = natsWakeBus({
    connection: nc,
    ...(options.subjectPrefix ? { subjectPrefix: options.subjectPrefix } : {}),
    ...(options.publishTimeoutMs ? { publishTimeoutMs: options.publishTimeoutMs } : {}),
  });
  return {
    ...bus,
    close: async () => {
      await bus.close();
      await nc.close();
    },
  };
}

/** A subject token for an organization id: bytes outside `[A-Za-z0-9_-]` as `%XX`, so dots and wildcards never split or widen a subject. */
export function subjectToken(organizationId: string): string {
  let token = "";
  for (const byte of Buffer.from(organizationId, "utf8")) {
    const c = String.fromCharCode(byte);
    token += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return token || "%";
}

/** The messages of one batch: per organization, per kind, at most `PER_MESSAGE` items each. */
function messagesOf(prefix: string, batch: HintBatch): [subject: string, payload: string][] {
  const out: [string, string][] = [];
  for (const [org, ids] of groupBy(batch.sessions, (hint) => hint.o)) {
    for (const part of slices(ids)) out.push([`${prefix}.session.${subjectToken(org)}`, part.map((hint) => hint.s).join(",")]);
  }
  for (const [org, notices] of groupBy(batch.wakes, (notice) => notice.o)) {
    for (const part of slices(notices)) out.push([`${prefix}.task.${subjectToken(org)}`, JSON.stringify(part)]);
  }
  for (const [org, hints] of groupBy(batch.push ?? [], (hint) => hint.o)) {
    for (const part of slices(hints)) out.push([`${prefix}.push.${subjectToken(org)}`, renderPush(part)]);
  }
  for (const [org, hints] of groupBy(batch.revokes ?? [], (hint) => hint.o)) {
    for (const part of slices(hints)) out.push([`${prefix}.revoke.${subjectToken(org)}`, JSON.stringify(part)]);
  }
  return out;
}

/** The organization id a subject's last token names (the inverse of `subjectToken`). */
export function organizationOf(subject: string): string {
  const token = subject.slice(subject.lastIndexOf(".") + 1);
  if (token === "%") return "";
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    if (token[i] === "%") {
      bytes.push(Number.parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(token.charCodeAt(i));
  }
  return Buffer.from(bytes).toString("utf8");
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item)) ?? [];
    group.push(item);
    groups.set(key(item), group);
  }
  return groups;
}

function slices<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += PER_MESSAGE) out.push(items.slice(i, i + PER_MESSAGE));
  return out;
}

async function resyncOnReconnect(nc: NatsConnection, handlers: WakeBusHandlers): Promise<void> {
  for await (const status of nc.status()) if (status.type === "reconnect") handlers.resync();
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
