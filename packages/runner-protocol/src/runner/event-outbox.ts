import type { Backoff } from "../client/backoff.js";
import type { RunnerClient } from "../client/runner-client.js";
import { type Timers, sleep } from "../timers.js";
import { LIMITS } from "../v1/limits.js";
import { type TaskEvent, type TaskEventInput, TaskEventSchema } from "../v1/task-events.js";
import { protocolSized } from "./protocol-sized.js";
import { retryUntilSettled } from "./retry-until-settled.js";

// Half the route's body limit, so a batch plus its envelope always fits.
const BATCH_BYTES = LIMITS.bodyBytes / 2;

/**
 * How a streaming turn's events become few posts: the first post of a task leaves at once (the
 * reader sees the first text as soon as a runner without coalescing would show it); each later
 * post waits until `windowMs` after the previous one left, the window doubling up to
 * `maxWindowMs`, and consecutive text deltas of one message become one delta meanwhile. A
 * request for the human (and the status that says the turn waits) leaves at once, and a batch
 * that reaches the post's size leaves without waiting.
 */
export interface Coalescing {
  windowMs: number;
  maxWindowMs: number;
}

/**
 * What the gateway knows already: a turn's `running` status (its claim moved the session to
 * running). A first post holding nothing else waits for the turn's first content, or a window.
 */
const isKnown = (event: TaskEventInput) => event.type === "status" && event.payload.status === "running";

/**
 * Events that never wait for a window: what the human or the reader waits on, and a step's usage
 * (the gateway pauses a turn at a budget in the post that carries the usage reaching it, and tells
 * the runner to stop in that post's answer; an engine reports usage once a step, so at most one
 * post more a step).
 */
const isUrgent = (event: TaskEventInput) =>
  event.type === "input.requested" ||
  event.type === "input.resolved" ||
  event.type === "usage" ||
  (event.type === "status" && event.payload.status === "waiting_input");

type Pending = TaskEventInput & { bytes: number };

/**
 * Numbers a task's events and posts them in order, batched, retrying transient failures.
 * `emit` never blocks the handler; `flush` waits until everything emitted so far is posted;
 * `detachTail` hands the last batch to the completion instead (protocol 3). Events are numbered
 * as they leave, so deltas merged while waiting leave no gap in the sequence.
 */
export class EventOutbox {
  #next = 1;
  /** Validated events not yet in a post; the last may still grow by a merge. */
  readonly #queue: Pending[] = [];
  #pumping: Promise<void> | null = null;
  readonly #detaching = new AbortController();
  /** Ends a window's wait early (an urgent event, a full batch). */
  #hurry = new AbortController();
  #window: number;
  #nextPostAt = 0;
  /** The first post holds only what the gateway knows, and waits for the turn's first content. */
  #awaitingContent = false;
  /** The error that made the outbox give up (a 409 such as lease_lost); later events are dropped. */
  failure: unknown;

  constructor(
    private readonly deps: {
      client: RunnerClient;
      taskId: string;
      attempt: number;
      /** The assignment's trace context, sent back with every post. */
      traceparent?: string | undefined;
      timers: Timers;
      backoff?: Backoff;
      /** Aborts the retries: the lease is gone or the runner is stopping. */
      signal: AbortSignal;
      /** Without it every event leaves as soon as no post is in flight. */
      coalescing?: Coalescing;
      /** The gateway's answer to a post asked the attempt to stop (`cancelRequested`). */
      onCancel?: () => void;
    },
  ) {
    this.#window = deps.coalescing?.windowMs ?? 0;
  }

  /**
   * Validates and queues one event, split to the protocol's sizes first (a long reply becomes
   * several events). Throws (a ZodError) for an invalid event, queuing nothing.
   */
  emit(input: TaskEventInput): void {
    const at = new Date(this.deps.timers.now()).toISOString();
    const pieces = protocolSized(input).map((piece) => {
      const { sequence: _, ...event } = TaskEventSchema.parse({ at, ...piece, sequence: 1 });
      return event as TaskEventInput;
    });
    if (this.failure !== undefined) return;
    for (const piece of pieces) this.#enqueue(piece);
    // The turn's first content ends a first post's wait for it: it leaves at once.
    const firstContent = this.#awaitingContent && !pieces.every(isKnown);
    if (firstContent || pieces.some(isUrgent) || this.#queuedBytes() >= BATCH_BYTES || this.#queue.length >= LIMITS.eventsPerPost) this.#hurry.abort();
    this.#pump();
  }

  async flush(): Promise<void> {
    while (this.#pumping) {
      this.#hurry.abort();
      await this.#pumping;
    }
  }

  /**
   * Ends the posting: waits for the post in flight, posts all but the last batch, and returns
   * that batch (possibly empty) for the completion to carry. Nothing emitted later is posted.
   */
  async detachTail(): Promise<TaskEvent[]> {
    this.#detaching.abort();
    await this.flush();
    while (this.#queue.length > 0 && !this.deps.signal.aborted) {
      const size = batchSize(this.#queue);
      if (size === this.#queue.length) break;
      await this.#post(size);
    }
    return this.#number(this.#queue.length);
  }

  #enqueue(event: TaskEventInput): void {
    const last = this.#queue.at(-1);
    if (this.deps.coalescing && last?.type === "assistant.delta" && event.type === "assistant.delta" && last.payload.messageId === event.payload.messageId) {
      const text = last.payload.text + event.payload.text;
      if (text.length <= LIMITS.deltaText) {
        const merged = { ...last, payload: { ...last.payload, text } };
        this.#queue[this.#queue.length - 1] = { ...merged, bytes: sizeOf(merged) };
        return;
      }
    }
    this.#queue.push({ ...event, bytes: sizeOf(event) });
  }

  #queuedBytes(): number {
    return this.#queue.reduce((sum, event) => sum + event.bytes, 0);
  }

  #pump(): void {
    if (this.#detaching.signal.aborted) return;
    this.#pumping ??= this.#drain().finally(() => {
      this.#pumping = null;
    });
  }

  async #drain(): Promise<void> {
    const { signal, timers } = this.deps;
    const stopped = () => signal.aborted || this.#detaching.signal.aborted;
    while (this.#queue.length > 0 && !stopped()) {
      // Coalescing, even the first post lets the handler's synchronous burst gather (a 0 ms wait);
      // one that would say only what the gateway knows waits for content, at most a window.
      this.#awaitingContent = this.deps.coalescing !== undefined && this.#next === 1 && this.#queue.every(isKnown);
      const wait = this.#awaitingContent ? this.#window : Math.max(this.#nextPostAt - timers.now(), this.deps.coalescing ? 0 : -1);
      if (wait >= 0 && !this.#hurry.signal.aborted) await sleep(timers, wait, AbortSignal.any([signal, this.#detaching.signal, this.#hurry.signal]));
      this.#awaitingContent = false;
      if (stopped()) return;
      this.#hurry = new AbortController();
      this.#schedule();
      await this.#post(batchSize(this.#queue));
    }
  }

  /** The earliest time of the post after this one (the window doubles up to its bound). */
  #schedule(): void {
    const { coalescing, timers } = this.deps;
    if (!coalescing) return;
    this.#nextPostAt = timers.now() + this.#window;
    this.#window = Math.min(coalescing.maxWindowMs, Math.max(coalescing.windowMs, this.#window * 2));
  }

  /** Numbers the first `count` queued events and takes them out of the queue. */
  #number(count: number): TaskEvent[] {
    return this.#queue.splice(0, count).map(({ bytes: _, ...event }) => ({ ...event, sequence: this.#next++ }) as TaskEvent);
  }

  async #post(count: number): Promise<void> {
    const { client, taskId, attempt, signal, traceparent } = this.deps;
    // Numbered once: a retried post carries the same sequences.
    const batch = this.#number(count);
    try {
      const answer = await retryUntilSettled(() => client.postEvents(taskId, attempt, batch, signal, { traceparent }), this.deps);
      if (answer.cancelRequested) this.deps.onCancel?.();
    } catch (error) {
      this.failure = error;
      this.#queue.length = 0;
    }
  }
}

const sizeOf = (event: TaskEventInput) => Buffer.byteLength(JSON.stringify(event)) + 16;

/** How many queued events the next post takes: up to the post's count and half its body. */
function batchSize(queue: readonly Pending[]): number {
  let count = 0;
  let bytes = 0;
  for (const event of queue) {
    if (count > 0 && (count >= LIMITS.eventsPerPost || bytes + event.bytes > BATCH_BYTES)) break;
    count++;
    bytes += event.bytes;
  }
  return count;
}
