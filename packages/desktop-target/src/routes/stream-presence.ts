import { type Logger, newId } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { flushReplica, type HeldRunner, releaseRunner, type RevokedRunner } from "../store/replica-presence.js";

/** A runner whose wake stream this process holds, and the token the stream opened with. */
export interface HeldStream extends HeldRunner {
  /** When the stream's token was minted (ms): a revocation refuses the tokens minted up to it. */
  mintedAt: number;
  /** Whether the stream is the runner's presence: its last one closing marks it offline. */
  presence: "stream" | "polls";
}

/**
 * The presence of the desktops whose wake streams one process holds, kept in memory and written in
 * batches: per flush (`flushMs`) one statement marks the process alive, notes the runners it began
 * to hold, and returns the held runners revoked since (their streams end, even when the revoke
 * hint was lost: the staleness bound of a stream's revocation is `flushMs`; a hint ends it at
 * once). An idle desktop therefore costs no statement of its own: its presence is its replica's.
 * A stream's open (the registration read, which marks it seen) and its runner's last close (seen,
 * released, offline when its stream is its presence) are written at once.
 */
export interface StreamPresence {
  /** Holds one stream until the returned release is called; `end` closes the stream (its runner was revoked). */
  hold(stream: HeldStream, end: () => void): () => void;
  /** Ends the streams of a runner revoked elsewhere (its hint arrived). */
  revoked(runner: HeldRunner): void;
  /** Flushes now, while it holds a stream: revoke hints may have been lost (the bus resynced). */
  flush(): Promise<void>;
}

interface Held {
  stream: HeldStream;
  end: () => void;
}

interface PresenceState {
  readonly sql: Sql;
  readonly replicaId: string;
  readonly flushMs: number;
  readonly logger: Logger;
  readonly released: (runner: HeldRunner) => void;
  /** Per runner (`runnerKey`): its streams here. */
  readonly runners: Map<string, Set<Held>>;
  /** Runners held since the last flush, to be noted by the next. */
  readonly pending: Map<string, HeldRunner>;
  timer: ReturnType<typeof setInterval> | null;
  /** The last flush asked for (flushes never reject). */
  flushing: Promise<void>;
}

const runnerKey = (runner: HeldRunner) => `${runner.organizationId}\u0000${runner.memberId}\u0000${runner.runnerId}`;

/** The process's stream presence; its timer runs only while it holds a stream, and never keeps the process alive. */
export function createStreamPresence(options: {
  sql: Sql;
  flushMs: number;
  logger: Logger;
  /** Told once a runner's release is written (its cached registration is stale: it was marked offline). */
  released(runner: HeldRunner): void;
}): StreamPresence {
  const state: PresenceState = {
    ...options,
    replicaId: newId("rpl"),
    runners: new Map(),
    pending: new Map(),
    timer: null,
    flushing: Promise.resolve(),
  };
  return {
    hold: (stream, end) => hold(state, stream, end),
    revoked: (runner) => endStreams(state, { ...runner, revoked: true, tokensNotBefore: null }),
    // Holding no stream, no lost hint can have left one open: nothing to check (and a bus that
    // resyncs as the process shuts down finds its database closed).
    flush: () => (state.runners.size === 0 ? Promise.resolve() : flush(state)),
  };
}

function hold(state: PresenceState, stream: HeldStream, end: () => void): () => void {
  const key = runnerKey(stream);
  const held: Held = { stream, end };
  const streams = state.runners.get(key) ?? new Set();
  if (streams.size === 0) state.pending.set(key, { organizationId: stream.organizationId, memberId: stream.memberId, runnerId: stream.runnerId });
  streams.add(held);
  state.runners.set(key, streams);
  if (!state.timer) {
    state.timer = setInterval(() => void flush(state), state.flushMs);
    state.timer.unref();
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release(state, key, held);
  };
}

function release(state: PresenceState, key: string, held: Held): void {
  const streams = state.runners.get(key);
  if (!streams?.delete(held) || streams.size > 0) return;
  state.runners.delete(key);
  state.pending.delete(key);
  if (state.runners.size === 0 && state.timer) {
    clearInterval(state.timer);
    state.timer = null;
  }
  const { stream } = held;
  void releaseRunner(state.sql, state.replicaId, stream, stream.presence === "stream").then(
    () => state.released(stream),
    (error: unknown) => state.logger.warn("desktop runner: a stream's release was not recorded", { runnerId: stream.runnerId, error: String(error) }),
  );
}

/** One flush at a time: a flush asked for while one runs follows it. */
function flush(state: PresenceState): Promise<void> {
  state.flushing = state.flushing.then(() => flushOnce(state));
  return state.flushing;
}

async function flushOnce(state: PresenceState): Promise<void> {
  const held = [...state.pending.values()];
  state.pending.clear();
  try {
    const revoked = await flushReplica(state.sql, state.replicaId, held);
    for (const runner of revoked) endStreams(state, runner);
  } catch (error) {
    // Noted again by the next flush (unless released meanwhile).
    for (const runner of held) if (state.runners.has(runnerKey(runner))) state.pending.set(runnerKey(runner), runner);
    state.logger.warn("desktop runner: presence flush failed", { runners: held.length, error: String(error) });
  }
}

/** Ends the runner's streams its revocation refuses: all of them, or those whose token predates `tokensNotBefore`. */
function endStreams(state: PresenceState, runner: RevokedRunner): void {
  for (const { stream, end } of [...(state.runners.get(runnerKey(runner)) ?? [])]) {
    if (runner.revoked || (runner.tokensNotBefore !== null && runner.tokensNotBefore >= stream.mintedAt)) end();
  }
}
