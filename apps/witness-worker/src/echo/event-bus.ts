import { randomBytes } from "node:crypto";
import { sseFrame } from "@openwork/remote-session-core/wire";

/** An event as opencode publishes it on `GET /event`. */
export interface EngineEvent {
  id: string;
  type: string;
  properties: Record<string, unknown>;
}

/**
 * opencode's event stream as the real server serves it: `text/event-stream` whose lines are only
 * `data: {json}` (no `event:` or `id:` lines), `server.connected` first, a heartbeat every 10 s.
 */
export function createEventBus(options: { heartbeatMs?: number } = {}) {
  const listeners = new Set<(event: EngineEvent) => void>();
  const enders = new Set<() => void>();
  const encoder = new TextEncoder();
  const event = (type: string, properties: Record<string, unknown>): EngineEvent => ({ id: `evt_${randomBytes(13).toString("hex")}`, type, properties });

  return {
    publish(type: string, properties: Record<string, unknown>): void {
      const published = event(type, properties);
      for (const listener of listeners) listener(published);
    },
    /** Ends every open stream, as an engine that dies does. */
    endAll(): void {
      for (const end of [...enders]) end();
    },
    /** How many streams are open (a test checks the gateway shares one). */
    subscribers: () => listeners.size,
    stream(signal: AbortSignal): Response {
      let listener: ((event: EngineEvent) => void) | undefined;
      let heartbeat: ReturnType<typeof setInterval> | undefined;
      let end: (() => void) | undefined;
      const close = () => {
        if (listener) listeners.delete(listener);
        if (end) enders.delete(end);
        clearInterval(heartbeat);
      };
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          const send = (e: EngineEvent) => {
            try {
              controller.enqueue(encoder.encode(sseFrame({ data: JSON.stringify(e) })));
            } catch {
              close();
            }
          };
          listener = send;
          listeners.add(send);
          send(event("server.connected", {}));
          heartbeat = setInterval(() => send(event("server.heartbeat", {})), options.heartbeatMs ?? 10_000);
          end = () => {
            close();
            try {
              controller.close();
            } catch {
              // already closed
            }
          };
          enders.add(end);
          signal.addEventListener("abort", end);
        },
        cancel: close,
      });
      return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;
