import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A real node:http server on 127.0.0.1 and a free port, for client tests. */
export interface TestServer {
  url: string;
  /** Requests received so far, in order. */
  readonly requests: { method: string; path: string; headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
}

export type TestHandler = (request: IncomingMessage & { body: string }, response: ServerResponse) => void | Promise<void>;

export async function startTestServer(handler: TestHandler): Promise<TestServer> {
  const requests: TestServer["requests"] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body });
    try {
      await handler(Object.assign(request, { body }), response);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "internal_error", message: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}
