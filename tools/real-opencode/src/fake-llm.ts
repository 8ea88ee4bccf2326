import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the fake model received (what opencode asked). */
export interface FakeLlmRequest {
  path: string;
  lastUserText: string;
  stream: boolean;
}

/**
 * A tiny OpenAI-compatible chat-completions server: it answers `FAKE_REPLY: <last user text>`,
 * streamed. A prompt containing `SLOW` streams one word every 300 ms (for stop tests and live
 * text); one containing `FAIL500` is answered 500, as a provider that is down (opencode retries).
 */
export async function startFakeLlm(): Promise<{ url: string; requests: FakeLlmRequest[]; close(): Promise<void> }> {
  const requests: FakeLlmRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = JSON.parse((await readBody(request)) || "{}") as { messages?: { role: string; content: unknown }[]; stream?: boolean };
    const lastUserText = lastUser(body.messages ?? []);
    requests.push({ path: request.url ?? "", lastUserText, stream: body.stream === true });
    if (lastUserText.includes("FAIL500")) {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "fake provider is down", type: "server_error" } }));
      return;
    }
    const reply = `FAKE_REPLY: ${lastUserText}`;
    const pieces = lastUserText.includes("SLOW") ? [...reply.split(" ").map((w) => `${w} `), ...Array(40).fill("more ")] : [reply];
    const delay = lastUserText.includes("SLOW") ? 300 : 0;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    if (body.stream !== true) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write(chunk({ role: "assistant", content: "" }));
    for (const piece of pieces) {
      if (response.destroyed) return;
      response.write(chunk({ content: piece }));
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    }
    response.write(chunk({}, "stop"));
    response.write(`data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
    response.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function lastUser(messages: { role: string; content: unknown }[]): string {
  const user = [...messages].reverse().find((m) => m.role === "user");
  if (!user) return "";
  if (typeof user.content === "string") return user.content;
  if (Array.isArray(user.content)) {
    return user.content.map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : "")).join("");
  }
  return "";
}
