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
 * Numbers a task's events and posts them in order, batched, retrying transient failures.
 * `emit` never blocks the handler; `flush` waits until everything emitted so far is posted;
 * `detachTail` hands the last batch to the completion instead (protocol 3). With `holdMs`, a post
 * waits that long for more events first, so bursts go out as one request.
 */
export class EventOutbox {
  #next = 1;
  readonly #queue: TaskEvent[] = [];
  #pumping: Promise<void> | null = null;
  readonly #detaching = new AbortController();
  /** The error that made the outbox give up (a 409 such as lease_lost); later events are dropped. */
  failure: unknown;

  constructor(
    private readonly deps: {
      client: RunnerClient;
      taskId: string;
      attempt: number;
      timers: Timers;
      backoff?: Backoff;
      /** Aborts the retries: the lease is gone or the runner is stopping. */
      signal: AbortSignal;
      /** How long a post waits for more events to batch. Default 0. */
      holdMs?: number;
    },
  ) {}

  /**
   * Validates and queues one event, split to the protocol's sizes first (a long reply becomes
   * several events). Throws (a ZodError) for an invalid event, numbering nothing.
   */
  emit(input: TaskEventInput): void {
    const at = new Date(this.deps.timers.now()).toISOString();
    const events = protocolSized(input).map((piece, i) => TaskEventSchema.parse({ at, ...piece, sequence: this.#next + i }));
    this.#next += events.length;
    if (this.failure !== undefined) return;
    this.#queue.push(...events);
    this.#pump();
  }

  async flush(): Promise<void> {
    while (this.#pumping) await this.#pumping;
  }

  /**
   * Ends the posting: waits for the post in flight, posts all but the last batch, and returns
   * that batch (possibly empty) for the completion to carry. Nothing emitted later is posted.
   */
  async detachTail(): Promise<TaskEvent[]> {
    this.#detaching.abort();
    await this.flush();
    while (this.#queue.length > 0 && !this.deps.signal.aborted) {
      const batch = takeBatch(this.#queue);
      if (batch.length === this.#queue.length) return this.#queue.splice(0);
      await this.#post(batch);
    }
    return this.#queue.splice(0);
  }

  #pump(): void {
    if (this.#detaching.signal.aborted) return;
    this.#pumping ??= this.#drain().finally(() => {
      this.#pumping = null;
    });
  }

  async #drain(): Promise<void> {
    const { signal, holdMs } = this.deps;
    if (holdMs) await sleep(this.deps.timers, holdMs, AbortSignal.any([signal, this.#detaching.signal]));
    while (this.#queue.length > 0 && !signal.aborted && !this.#detaching.signal.aborted) await this.#post(takeBatch(this.#queue));
  }

  async #post(batch: TaskEvent[]): Promise<void> {
    const { client, taskId, attempt, signal } = this.deps;
    try {
      await retryUntilSettled(() => client.postEvents(taskId, attempt, batch, signal), this.deps);
      this.#queue.splice(0, batch.length);
    } catch (error) {
      this.failure = error;
      this.#queue.length = 0;
    }
  }
}

function takeBatch(queue: TaskEvent[]): TaskEvent[] {
  const batch: TaskEvent[] = [];
  let bytes = 0;
  for (const event of queue) {
    const size = Buffer.byteLength(JSON.stringify(event));
    if (batch.length > 0 && (batch.length >= LIMITS.eventsPerPost || bytes + size > BATCH_BYTES)) break;
    batch.push(event);
    bytes += size;
  }
  return batch;
}
