import { RUNNER_TOKEN_TTL_MS, wakeFrame } from "@openwork/runner-protocol/internal";
import { hasWork } from "../store/list-work.js";
import type { RunnerIdentity } from "../store/task-row.js";
import type { WakeNotice } from "../wake/channels.js";
import type { WakeSignal } from "../wake/wake-hub.js";
import { workRunner } from "./claim-host-work.js";
import type { RouteContext } from "./route-context.js";

// Timers in Node cannot wait longer than a 32-bit millisecond count.
const MAX_TIMER_MS = 2 ** 31 - 1;
const REPLAY_LIMIT = 100;
// Stateless: one for every stream (a stream holds nothing of its own for it).
const encoder = new TextEncoder();

/** How a dialect frames its wake stream. */
export interface StreamFraming {
  /** Written at once. */
  opening: string;
  keepalive: string;
  /** Whether the stream carries work hints (a dialect's stream may carry only work this gateway never has). */
  hints: boolean;
  /** For the runners that read one (`reads`), the frame that tells whether work waits as the stream opens. */
  ready?: { reads(runner: RunnerIdentity): boolean; frame(work: boolean): string };
  /** For a stream without work hints: the frame of a wake-up it does carry (OpenWork's for the host's runs), or null. */
  hintOf?(ctx: RouteContext, runner: RunnerIdentity, notice: Pick<WakeNotice, "w" | "t">): string | null;
}

/**
 * `GET events`: the runner's SSE wake stream. Sends `remote_session_work_available` hints (SSE
 * `id` = cursor; hints after `Last-Event-ID` are replayed first) and a keepalive every 15 s,
 * re-checks membership every 15 s and ends when the token expires or the runner is revoked. While
 * it is open it is the runner's presence, kept by this process's `StreamPresence` (no statement
 * of its own). To a runner that reads it (protocol 5) the replay is followed by whether work waits,
 * checked after the stream subscribed: what is queued later comes as a hint.
 */
export function handleEventsStream(ctx: RouteContext, runner: RunnerIdentity & { expiresAt: number }, request: Request): Response {
  // The runner's dialect frames its stream and says whether the stream is its presence.
  const { dialect } = runner;
  const { framing } = dialect;
  const resumeAfter = framing.hints ? parseLastEventId(request.headers.get("last-event-id")) : null;
  let cleanup = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const stream: WakeStream = {
        ctx,
        runner,
        framing,
        controller,
        // Encoded once: a keepalive written every 15 s to each of thousands of idle streams
        // allocates nothing (no buffer for the collector to track per write).
        keepalive: encoder.encode(framing.keepalive),
        open: true,
        lastSent: resumeAfter ?? 0,
        // Hints that arrive while the replay is read wait, so the stream stays in id order.
        buffered: [],
        cleanup: () => {},
      };
      cleanup = startWakeStream(stream, request, resumeAfter);
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
  });
}

/** One open wake stream: what its pieces share. */
interface WakeStream {
  readonly ctx: RouteContext;
  readonly runner: RunnerIdentity & { expiresAt: number };
  readonly framing: StreamFraming;
  readonly controller: ReadableStreamDefaultController<Uint8Array>;
  readonly keepalive: Uint8Array;
  open: boolean;
  lastSent: number;
  /** The hints held back while the replay is read; null once it was. */
  buffered: WakeSignal[] | null;
  /** Ends the stream's subscription and timers (once); set once they exist. */
  cleanup: () => void;
}

/** Subscribes the stream, starts its timers, writes the opening and replays; returns its cleanup. */
function startWakeStream(stream: WakeStream, request: Request, resumeAfter: number | null): () => void {
  const { ctx, runner } = stream;
  const unsubscribe = ctx.hub.subscribeRunner(
    runner,
    (signal) => deliver(stream, signal),
    () => close(stream),
  );
  // The stream is the runner's presence while it is open, written with the others this process
  // holds; a revocation ends it (at once by its hint, else at the next flush).
  const release = ctx.presence.hold(
    {
      organizationId: runner.organizationId,
      memberId: runner.memberId,
      runnerId: runner.runnerId,
      mintedAt: runner.expiresAt - RUNNER_TOKEN_TTL_MS,
      presence: runner.dialect.presence,
    },
    () => close(stream),
  );
  const keepalive = setInterval(() => {
    if (stream.open) stream.controller.enqueue(stream.keepalive);
  }, ctx.keepaliveMs);
  // A member no longer active: the process's membership check ends its streams.
  const unwatch = ctx.streamMembership.watch(runner, () => close(stream));
  const expiry = setTimeout(() => close(stream), Math.min(MAX_TIMER_MS, Math.max(0, runner.expiresAt - Date.now())));
  stream.cleanup = () =>
    endStream(
      stream,
      () => {
        unsubscribe();
        release();
        unwatch();
      },
      { keepalive, expiry },
    );
  request.signal.addEventListener("abort", () => stream.cleanup(), { once: true });

  write(stream, stream.framing.opening);
  void replay(ctx, runner, resumeAfter)
    .then((rows) => {
      for (const row of rows) sendNotice(stream, row);
    })
    .catch((error: unknown) => ctx.logger.warn("desktop runner: wake replay failed", { runnerId: runner.runnerId, error: String(error) }))
    .then(() => tellReady(stream))
    .finally(() => {
      const pending = stream.buffered ?? [];
      stream.buffered = null;
      for (const signal of pending) deliver(stream, signal);
    });
  return () => stream.cleanup();
}

/** Tells a runner that reads it whether work waits (yes when that cannot be told: the runner then looks). */
async function tellReady(stream: WakeStream): Promise<void> {
  const { ctx, runner, framing } = stream;
  const { ready } = framing;
  if (!ready?.reads(runner)) return;
  const work = await workWaits(ctx, runner).catch((error: unknown) => {
    ctx.logger.warn("desktop runner: the stream's work check failed", { runnerId: runner.runnerId, error: String(error) });
    return true;
  });
  write(stream, ready.frame(work));
}

/** Any remote-session task for the runner, or any of the host's kinds (a kind that cannot tell says yes). */
async function workWaits(ctx: RouteContext, runner: RunnerIdentity): Promise<boolean> {
  if (await hasWork(ctx.sql, runner)) return true;
  const kinds = ctx.workKinds.all;
  if (kinds.length === 0) return false;
  const answers = await Promise.all(kinds.map((kind) => (kind.waiting ? kind.waiting(workRunner(runner)) : true)));
  return answers.includes(true);
}

function write(stream: WakeStream, text: string): void {
  if (stream.open) stream.controller.enqueue(encoder.encode(text));
}

function sendNotice(stream: WakeStream, notice: Pick<WakeNotice, "w" | "t">): void {
  if (notice.w <= stream.lastSent) return;
  const { framing, ctx, runner } = stream;
  const frame = framing.hints
    ? wakeFrame({ type: "remote_session_work_available", cursor: String(notice.w), taskId: notice.t }, String(notice.w))
    : (framing.hintOf?.(ctx, runner, notice) ?? null);
  if (frame === null) return;
  stream.lastSent = notice.w;
  write(stream, frame);
}

function deliver(stream: WakeStream, signal: WakeSignal): void {
  if (stream.buffered) stream.buffered.push(signal);
  else if (signal.kind === "task") sendNotice(stream, signal.notice);
  // After the listener reconnected, hints may be lost: tell the runner to look.
  else if (stream.framing.hints) write(stream, wakeFrame({ type: "remote_session_work_available", cursor: String(stream.lastSent) }));
}

function close(stream: WakeStream): void {
  if (!stream.open) return;
  stream.cleanup();
  try {
    stream.controller.close();
  } catch {
    // already closed by the reader
  }
}

/** The stream's cleanup: unsubscribes and releases its presence (`leave`), stops the timers. */
function endStream(stream: WakeStream, leave: () => void, timers: { keepalive: ReturnType<typeof setInterval>; expiry: ReturnType<typeof setTimeout> }): void {
  // Runs once: the request's abort and the body's cancel both end a stream, and a second
  // disconnect mark could land after the runner's next request had brought it back online.
  if (!stream.open) return;
  stream.open = false;
  leave();
  clearInterval(timers.keepalive);
  clearTimeout(timers.expiry);
}

async function replay(ctx: RouteContext, runner: RunnerIdentity, after: number | null): Promise<{ w: number; t: string }[]> {
  if (after === null) return [];
  const rows = await ctx.sql<{ id: string; task_id: string }[]>`
    select id, task_id from desktop_wake
    where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and id > ${after}
      and (runner_id is null or runner_id = ${runner.runnerId})
    order by id limit ${REPLAY_LIMIT}`;
  return rows.map((row) => ({ w: Number(row.id), t: row.task_id }));
}

function parseLastEventId(value: string | null): number | null {
  if (value === null || !/^\d{1,15}$/.test(value.trim())) return null;
  return Number(value.trim());
}
