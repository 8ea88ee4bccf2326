import { dropStream, type EventsContext, emptySignals, keyOf, openStream, type Stream, type Tracked } from "./event-streams.js";
import type { EventSource, SessionSignals, SessionWatch } from "./worker-events.js";

// Sessions remembered per stream beyond the watched ones.
const IDLE_SESSIONS_KEPT = 500;

/** `WorkerEvents.watch`. */
export function watchSession(ctx: EventsContext, source: EventSource, sessionId: string): SessionWatch {
  const { streams } = ctx;
  const key = keyOf(source);
  let stream = streams.get(key);
  if (!stream && streams.size >= (ctx.options.maxStreams ?? 64)) return offline();
  stream ??= openStream(ctx, key, source);
  const current = stream;
  clearTimeout(current.linger);
  current.watchers++;
  const tracked = track(ctx, key, current, sessionId);
  tracked.watchers++;
  let closed = false;
  return {
    connected: current.connected,
    live: () => current.live,
    version: () => tracked.version,
    signals: () => tracked.signals,
    changed: (seen, ms) =>
      new Promise<void>((resolve) => {
        if (tracked.version !== seen || (!current.live && streams.get(key) !== current)) return resolve();
        const done = () => {
          clearTimeout(timer);
          tracked.wake.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        tracked.wake.add(done);
      }),
    close: () => {
      if (closed) return;
      closed = true;
      tracked.watchers--;
      current.watchers--;
      if (current.watchers === 0) current.linger = setTimeout(() => dropStream(ctx, key, current, "idle"), ctx.lingerMs);
    },
  };
}

/** `WorkerEvents.peek`. */
export function peekSession(ctx: EventsContext, source: EventSource, sessionId: string): SessionSignals | undefined {
  const key = keyOf(source);
  const tracked = ctx.streams.get(key)?.sessions.get(sessionId);
  const held = ctx.retired.get(key)?.get(sessionId);
  if (tracked || !held) return tracked?.signals;
  const signals = emptySignals();
  for (const [messageId, { text, partial }] of held) {
    signals.liveText.set(messageId, text);
    if (partial) signals.liveTextPartial.add(messageId);
  }
  return signals;
}

function track(ctx: EventsContext, key: string, stream: Stream, sessionId: string): Tracked {
  const { retired } = ctx;
  let tracked = stream.sessions.get(sessionId);
  if (!tracked) {
    tracked = { signals: emptySignals(), partsHeard: new Map(), carried: new Set(), lastUserMessageId: null, version: 0, watchers: 0, wake: new Set() };
    // What an earlier stream heard is the text known so far of a reply that stopped meanwhile.
    for (const [messageId, held] of retired.get(key)?.get(sessionId) ?? []) {
      tracked.signals.liveText.set(messageId, held.text);
      if (held.partial) tracked.signals.liveTextPartial.add(messageId);
      tracked.carried.add(messageId);
    }
    retired.get(key)?.delete(sessionId);
    stream.sessions.set(sessionId, tracked);
    forgetIdle(stream);
  }
  return tracked;
}

function forgetIdle(stream: Stream): void {
  let excess = stream.sessions.size - IDLE_SESSIONS_KEPT;
  for (const [id, tracked] of stream.sessions) {
    if (excess <= 0) break;
    if (tracked.watchers > 0) continue;
    stream.sessions.delete(id);
    excess--;
  }
}

function offline(): SessionWatch {
  const signals: SessionSignals = emptySignals();
  return {
    connected: Promise.resolve(false),
    live: () => false,
    version: () => 0,
    signals: () => signals,
    changed: (_seen, ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => {},
  };
}
