import { followSse, SseSilentError } from "@openwork/remote-session-core/wire";
import type { EventSourceMessage } from "eventsource-parser";
import { type Timers, sleep, systemTimers } from "../timers.js";
import { type WakeEvent, WakeEventSchema } from "../v1/wake-event.js";
import { type Backoff, DEFAULT_BACKOFF, backoffDelay } from "./backoff.js";
import { errorFromResponse } from "./http-transport.js";
import { RunnerProtocolError } from "./runner-protocol-error.js";
import type { RunnerClient } from "./runner-client.js";

export interface WakeStreamOptions {
  /** Where to connect and with which credential. */
  client: Pick<RunnerClient, "eventsUrl" | "authorization">;
  onEvent: (event: WakeEvent) => void;
  /** Called as each attempt to (re)connect starts, before its request is sent. */
  onConnect?: () => void;
  /** Called on every (re)connect: a wake-up may have been missed while the stream was down. */
  onOpen?: () => void;
  /** Called on every failed or dropped connection, before the backoff; the stream retries. */
  onError?: (error: RunnerProtocolError) => void;
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /** A stream with no bytes for this long counts as dead. Default 45 s (three missed keepalives). */
  silenceMs?: number;
  backoff?: Backoff;
  fetch?: typeof fetch;
  timers?: Timers;
}

/** A running wake stream. It reconnects by itself until closed. */
export interface WakeStream {
  /** The id of the last event received; sent as `Last-Event-ID` on reconnect. */
  readonly lastEventId: string | undefined;
  close(): void;
  /** Resolves once the stream is closed. */
  readonly closed: Promise<void>;
}

/**
 * Consumes the gateway's SSE wake stream (`GET events`). Events carry only hints; the caller
 * polls `GET work` on each. Reconnects with backoff and `Last-Event-ID`; a stream silent for
 * `silenceMs` is dropped and reopened, since a half-open TCP connection never errors by itself.
 */
export function openWakeStream(options: WakeStreamOptions): WakeStream {
  const timers = options.timers ?? systemTimers;
  const silenceMs = options.silenceMs ?? 45_000;
  const stop = new AbortController();
  let lastEventId = options.lastEventId;

  const connectOnce = async (): Promise<{ healthy: boolean; retryAfterMs?: number | undefined }> => {
    let received = false;
    try {
      await followSse({
        open: async (signal) => {
          const headers: Record<string, string> = {
            accept: "text/event-stream",
            authorization: await options.client.authorization(),
          };
          if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
          options.onConnect?.();
          const response = await (options.fetch ?? fetch)(options.client.eventsUrl, { headers, redirect: "error", signal });
          if (!response.ok || !response.body) throw await refusalOf(response);
          options.onOpen?.();
          return response.body;
        },
        onMessage: deliver,
        onBytes: () => (received = true),
        silenceMs,
        signal: stop.signal,
        timers,
      });
      throw new RunnerProtocolError({ code: "network_error", message: "the wake stream ended" });
    } catch (error) {
      const failure = asProtocolError(error);
      if (!stop.signal.aborted) options.onError?.(failure);
      return { healthy: received, retryAfterMs: failure.retryAfterMs };
    }
  };

  const deliver = (message: EventSourceMessage) => {
    if (message.id !== undefined) lastEventId = message.id;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      return;
    }
    // Unknown event types from a newer gateway are skipped, not fatal.
    const parsed = WakeEventSchema.safeParse(data);
    if (parsed.success) options.onEvent(parsed.data);
  };

  const closed = (async () => {
    let failures = 0;
    while (!stop.signal.aborted) {
      const { healthy, retryAfterMs } = await connectOnce();
      failures = healthy ? 0 : failures + 1;
      // A gateway that said when to come back (a full or busy process) is not asked sooner.
      await sleep(timers, Math.max(retryAfterMs ?? 0, backoffDelay(failures, options.backoff ?? DEFAULT_BACKOFF)), stop.signal);
    }
  })();

  return {
    get lastEventId() {
      return lastEventId;
    },
    close: () => stop.abort(),
    closed,
  };
}

/** A refused open as a typed error: `runner_unauthorized` for a 401, else the body's code (or `http_<status>`), with the wait it asked for. */
async function refusalOf(response: Response): Promise<RunnerProtocolError> {
  const refusal = errorFromResponse(response, await response.text().catch(() => ""));
  if (response.status !== 401) return refusal;
  return new RunnerProtocolError({ code: "runner_unauthorized", message: refusal.message, status: 401 });
}

function asProtocolError(error: unknown): RunnerProtocolError {
  if (RunnerProtocolError.isInstance(error)) return error;
  if (SseSilentError.isInstance(error)) {
    return new RunnerProtocolError({ code: "timeout", message: "the wake stream went silent", cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RunnerProtocolError({ code: "network_error", message: `wake stream: ${message}`, cause: error });
}
