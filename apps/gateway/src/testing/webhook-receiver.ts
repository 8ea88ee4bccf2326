import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1: every POST is recorded, and answered with
 * `statusOf(path)` (default 200), unless `hold` says to leave it unanswered. `ids()` counts requests by `webhook-id`, as a receiver that
 * dedupes does; `until(check)` resolves once `check` holds of what was received.
 */
export async function startWebhookReceiver(statusOf: (path: string) => number = () => 200, options: { hold?: (hook: ReceivedHook) => boolean } = {}) {
  const received: ReceivedHook[] = [];
  const listeners = new Set<() => void>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "/";
      const hook = { path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(hook);
      // A held request is never answered: its sender dies or times out waiting (until close).
      if (!options.hold?.(hook)) response.writeHead(statusOf(path)).end();
      for (const listener of listeners) listener();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    /** The receiver's URL for `path` (e.g. `/ok`). */
    url: (path: string) => `${origin}${path}`,
    received,
    /** How many requests carried each webhook-id. */
    ids: () => {
      const counts = new Map<string, number>();
      for (const hook of received) {
        const id = String(hook.headers["webhook-id"]);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    until: (check: (received: readonly ReceivedHook[]) => boolean, timeoutMs = 15_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`the webhook receiver got ${received.length} requests, not what was awaited, in ${timeoutMs} ms`));
        }, timeoutMs);
        const listener = () => {
          if (!check(received)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve();
        };
        listeners.add(listener);
        listener();
      }),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

/** Adds a webhook channel for the member whose session token is `token`, taking `eventKinds`, with text allowed. */
export async function addWebhookChannel(baseUrl: string, token: string, target: string, eventKinds: readonly string[]): Promise<void> {
  const channel = await fetch(`${baseUrl}/member/notify/channels`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "webhook", target, eventKinds, allowText: true }),
  });
  if (channel.status !== 201) throw new Error(`the channel was not created: ${channel.status} ${await channel.text()}`);
}
