import type { Sql } from "postgres";
import { z } from "zod";
import { PUSH_CHANNEL, REVOKE_CHANNEL, SESSION_CHANNEL, WAKE_CHANNEL, type WakeNotice } from "./channels.js";

/** A session that changed, with its organization (the NATS adapter's subject). */
export interface SessionHint {
  o: string;
  s: string;
}

/**
 * A hint for a push package's streams (stateful MCP sessions): MCP session `m` of organization `o`
 * has new events to send (`events`), changed its subscriptions (`subs`), or ended (`gone`).
 * Delivered, `o` is "" from a bus whose payload does not carry it (PostgreSQL's, which needs no
 * organization to route).
 */
export interface PushHint {
  o: string;
  m: string;
  k: PushHintKind;
}

export type PushHintKind = "events" | "subs" | "gone";

/**
 * A runner that was revoked: every process forgets its cached registration. A bus that does not
 * carry these loses nothing but time: a cached registration lives at most `registrationCacheMs`.
 */
export interface RevokeHint {
  o: string;
  m: string;
  r: string;
}

/** Hints from transactions that committed, coalesced: one publish carries them all. */
export interface HintBatch {
  sessions: readonly SessionHint[];
  wakes: readonly WakeNotice[];
  /** Push hints; absent when there are none. */
  push?: readonly PushHint[];
  /** Revoked runners; absent when there are none. */
  revokes?: readonly RevokeHint[];
}

/** What a bus tells the process's wake hub. */
export interface WakeBusHandlers {
  sessions(ids: readonly string[]): void;
  wakes(notices: readonly WakeNotice[]): void;
  /** Push hints for the push streams this process holds (a bus must carry them: the hub's start-up probe checks). */
  push?(hints: readonly PushHint[]): void;
  /** Revoked runners (a bus that does not carry them leaves the registration caches to their bound). */
  revokes?(hints: readonly RevokeHint[]): void;
  /** The bus reconnected: hints sent meanwhile may be lost, so every stream and waiter looks again. */
  resync(): void;
  /** A payload that could not be read (logged by the hub, never thrown into the bus). */
  unreadable(where: string): void;
}

/**
 * Carries wake-up hints between gateway processes. A hint only says "look again": a lost one is
 * covered by the runners' backstop poll, `Last-Event-ID` replay and the waiters' timeouts, so a
 * bus may drop hints (and must then call `resync` once it is back), never invent work.
 */
export interface WakeBus {
  /** Names the bus in start-up errors and metrics. */
  readonly name: string;
  /**
   * What the hub's start-up probe reports when a hint it sent did not come back within
   * `timeoutMs`: the likely cause on this bus, and its fix. Default: the bus's name and the wait.
   */
  unheard?(timeoutMs: number): string;
  /** Sends committed hints to every process (this one too). Resolves once handed over; rejects when it could not be. */
  publish(batch: HintBatch): Promise<void>;
  /** Delivers every process's hints to `handlers`; resolves once listening. One subscriber per bus. */
  subscribe(handlers: WakeBusHandlers): Promise<void>;
  close(): Promise<void>;
}

// NOTIFY payloads stay under PostgreSQL's 8 000-byte limit.
const MAX_NOTIFY_PAYLOAD = 7_000;

/**
 * The default bus: PostgreSQL LISTEN/NOTIFY, no extra service. Hints are sent through `sql` in
 * one statement per batch; `listen` (default `sql`) must be a direct connection to the primary —
 * a pooler in transaction mode drops LISTEN without an error (the hub's start-up probe catches it).
 * postgres.js re-establishes the listen after a database restart by itself; each time it does,
 * the bus resyncs.
 */
export function postgresWakeBus(options: { sql: Sql; listen?: Sql }): WakeBus {
  const listener = options.listen ?? options.sql;
  const handles: ReturnType<Sql["listen"]>[] = [];
  return {
    name: "PostgreSQL LISTEN/NOTIFY",
    unheard: (timeoutMs) =>
      `the wake hub's LISTEN connection did not receive a hint the gateway sent within ${timeoutMs} ms: a connection pooler in transaction mode (or another database) sits between them; give the hub a direct connection to the primary`,
    publish: async (batch) => {
      const parts = [
        ...chunks(
          batch.sessions,
          (hint) => hint.s.length + 1,
          (hints) => hints.map((hint) => hint.s).join(","),
          MAX_NOTIFY_PAYLOAD,
        ).map((p) => [SESSION_CHANNEL, p] as const),
        ...chunks(
          batch.wakes,
          (notice) => JSON.stringify(notice).length + 1,
          (notices) => JSON.stringify(notices),
          MAX_NOTIFY_PAYLOAD,
        ).map((p) => [WAKE_CHANNEL, p] as const),
        ...chunks(batch.push ?? [], (hint) => pushEntry(hint).length + 1, renderPush, MAX_NOTIFY_PAYLOAD).map((p) => [PUSH_CHANNEL, p] as const),
        ...chunks(
          batch.revokes ?? [],
          (hint) => JSON.stringify(hint).length + 1,
          (hints) => JSON.stringify(hints),
          MAX_NOTIFY_PAYLOAD,
        ).map((p) => [REVOKE_CHANNEL, p] as const),
      ];
      if (parts.length === 0) return;
      await options.sql`select pg_notify(c, p) from unnest(${parts.map((part) => part[0])}::text[], ${parts.map((part) => part[1])}::text[]) as hint(c, p)`;
    },
    subscribe: async (handlers) => {
      const channels = [
        [WAKE_CHANNEL, (payload: string) => readWakes(payload, handlers, WAKE_CHANNEL)],
        [SESSION_CHANNEL, (payload: string) => readSessions(payload, handlers)],
        [PUSH_CHANNEL, (payload: string) => readPush(payload, "", handlers, PUSH_CHANNEL)],
        [REVOKE_CHANNEL, (payload: string) => readRevokes(payload, handlers, REVOKE_CHANNEL)],
      ] as const;
      // onlisten runs on every (re)connect of the listening connection; after the first, resync.
      await Promise.all(
        channels.map(
          ([channel, onPayload]) =>
            new Promise<void>((resolve) => {
              let first = true;
              const handle = listener.listen(channel, onPayload, () => {
                if (!first) return handlers.resync();
                first = false;
                resolve();
              });
              handle.catch(() => {});
              handles.push(handle);
            }),
        ),
      );
    },
    close: async () => {
      await Promise.all(handles.splice(0).map(async (handle) => (await handle).unlisten()));
    },
  };
}

/** Hands the session ids of one payload (one id, or several joined with commas) to `handlers`. For bus adapters. */
export const readSessions = (payload: string, handlers: WakeBusHandlers): void => handlers.sessions(payload.split(",").filter(Boolean));

const pushEntry = (hint: PushHint) => `${hint.m}:${hint.k}`;

/** The payload of push hints (all of one organization on NATS, any on PostgreSQL): `<m>:<k>` joined with commas. */
export const renderPush = (hints: readonly PushHint[]): string => hints.map(pushEntry).join(",");

const PUSH_ENTRY = /^([A-Za-z0-9_-]{1,64}):(events|subs|gone)$/;

/**
 * Hands the push hints of one payload to `handlers` (`organizationId`: the subject's, when the
 * bus knows it; "" when the payload does not carry it); a payload with an entry that does not
 * read goes to `handlers.unreadable`, whole. For bus adapters.
 */
export function readPush(payload: string, organizationId: string, handlers: WakeBusHandlers, where: string): void {
  const hints: PushHint[] = [];
  for (const entry of payload.split(",")) {
    const match = PUSH_ENTRY.exec(entry);
    if (!match) {
      handlers.unreadable(where);
      return;
    }
    hints.push({ o: organizationId, m: match[1]!, k: match[2] as PushHintKind });
  }
  handlers.push?.(hints);
}

const wakeNotice = z.object({ w: z.number(), o: z.string(), m: z.string(), r: z.string().nullable(), t: z.string() });
const wakePayload = z.union([wakeNotice, z.array(wakeNotice)]);

/**
 * Hands the wake notices of one payload (a JSON notice, or an array of them) to `handlers`; a
 * payload that does not parse goes to `handlers.unreadable`. For bus adapters.
 */
export function readWakes(payload: string, handlers: WakeBusHandlers, where: string): void {
  let parsed: z.infer<typeof wakePayload>;
  try {
    parsed = wakePayload.parse(JSON.parse(payload));
  } catch {
    handlers.unreadable(where);
    return;
  }
  handlers.wakes(Array.isArray(parsed) ? parsed : [parsed]);
}

const revokeHints = z.array(z.object({ o: z.string(), m: z.string(), r: z.string() }));

/** Hands the revoke hints of one payload (a JSON array) to `handlers`; one that does not parse goes to `handlers.unreadable`. For bus adapters. */
export function readRevokes(payload: string, handlers: WakeBusHandlers, where: string): void {
  let parsed: RevokeHint[];
  try {
    parsed = revokeHints.parse(JSON.parse(payload));
  } catch {
    handlers.unreadable(where);
    return;
  }
  handlers.revokes?.(parsed);
}

/** Splits items into payloads of at most `max` characters (`size`: an item's rendered length plus its separator). */
export function chunks<T>(items: readonly T[], size: (item: T) => number, render: (items: T[]) => string, max: number): string[] {
  const out: string[] = [];
  let current: T[] = [];
  let length = 2;
  for (const item of items) {
    if (current.length > 0 && length + size(item) > max) {
      out.push(render(current));
      current = [];
      length = 2;
    }
    current.push(item);
    length += size(item);
  }
  if (current.length > 0) out.push(render(current));
  return out;
}
