import { createParser, type EventSourceMessage } from "eventsource-parser";
import { SseSilentError } from "./sse-silent-error.js";

/** The timers the follower arms; tests pass their own (the runner client's `Timers` fits). */
export interface SseTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface FollowSseOptions {
  /** Opens the stream on `signal` (a fetch, say) and gives its body; throws for an answer that is no stream. */
  open(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** Each message, as `eventsource-parser` reads it (comments are skipped). */
  onMessage(message: EventSourceMessage): void;
  /** Bytes arrived: a message, part of one, or a keepalive comment. */
  onBytes?(): void;
  /**
   * No byte for this long, connecting included, ends the connection with {@link SseSilentError}.
   * Left out, a silent connection is followed until it ends (a client with no silence timer).
   */
  silenceMs?: number;
  /** Ends the connection (the follower then rejects with the signal's reason). */
  signal?: AbortSignal;
  timers?: SseTimers;
}

const systemTimers: SseTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Follows one connection of an SSE stream to its end. Resolves when the server ends the stream;
 * rejects with {@link SseSilentError} when it goes silent (a half-open TCP connection never
 * errors by itself), with `signal`'s reason when the caller ends it, or with what `open` threw.
 * Reconnecting is the caller's: what to resume from and how long to wait differ by stream.
 */
export async function followSse(options: FollowSseOptions): Promise<void> {
  const timers = options.timers ?? systemTimers;
  const connection = new AbortController();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  // Aborting the fetch does not always settle a pending read of a piped body (seen with
  // undici), so the reader is cancelled as well: that ends the read at once.
  const drop = (reason?: unknown) => {
    connection.abort(reason);
    void reader?.cancel().catch(() => {});
  };
  const stop = () => drop(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener("abort", stop, { once: true });
  let silence: unknown;
  const { silenceMs } = options;
  const arm = () => {
    if (silenceMs === undefined) return;
    timers.clearTimeout(silence);
    silence = timers.setTimeout(() => drop(new SseSilentError(silenceMs)), silenceMs);
  };
  try {
    arm();
    const body = await options.open(connection.signal);
    const parser = createParser({ onEvent: (message) => options.onMessage(message) });
    const decoder = new TextDecoder();
    reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (connection.signal.aborted) throw connection.signal.reason;
      if (done) return;
      options.onBytes?.();
      arm();
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } catch (error) {
    // A dropped connection rejects with whatever the fetch chose; why it was dropped is the truth.
    throw connection.signal.aborted ? connection.signal.reason : error;
  } finally {
    timers.clearTimeout(silence);
    options.signal?.removeEventListener("abort", stop);
    drop();
  }
}
