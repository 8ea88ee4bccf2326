import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/**
 * A real HTTP receiver on 127.0.0.1 answering each POST with the next of `statuses` (the last one
 * repeats). `next(n)` resolves once `n` requests have come.
 */
export async function startWebhookReceiver(statuses: readonly number[] = [200]) {
  const received: ReceivedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const status = statuses[Math.min(received.length, statuses.length - 1)] ?? 200;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      response.writeHead(status).end();
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    next: (count: number) =>
      new Promise<void>((resolve) => {
        if (received.length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A real SMTP server on 127.0.0.1 (no TLS, no auth) keeping each message's raw text. */
export async function startSmtpReceiver() {
  const messages: { to: string[]; raw: string }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString("utf8") });
        for (const waiter of waiters.filter((w) => messages.length >= w.count)) waiter.resolve();
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    messages,
    next: (count: number) =>
      new Promise<void>((resolve) => {
        if (messages.length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
