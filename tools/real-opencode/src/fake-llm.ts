import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the fake model received (what opencode asked). */
export interface FakeLlmRequest {
  path: string;
  lastUserText: string;
  stream: boolean;
  /** Names of the tools opencode offered. */
  tools: string[];
  /** The content of the latest tool result, when the model is called back after a tool ran. */
  toolResult?: string;
  /** When it arrived (`Date.now()`). */
  at: number;
}

/**
 * Markers that make the fake model call one of opencode's tools first, then answer with the
 * tool's result once opencode calls it back: `RUNBASH` runs `echo bash-ran` (a permission under
 * an `ask` policy), `ASKQ` asks one question with two options, `TODO` writes two todos.
 */
const TOOL_MARKERS: Record<string, { name: string; args: Record<string, unknown> }> = {
  RUNBASH: { name: "bash", args: { command: "echo bash-ran", description: "Print a marker" } },
  ASKQ: {
    name: "question",
    args: {
      questions: [
        {
          question: "Which colour should the button be?",
          header: "Colour",
          options: [
            { label: "Red", description: "Warm" },
            { label: "Blue", description: "Cool" },
          ],
        },
      ],
    },
  },
  TODO: {
    name: "todowrite",
    args: {
      todos: [
        { content: "Write the plan", status: "completed", priority: "high" },
        { content: "Ship it", status: "pending", priority: "medium" },
      ],
    },
  },
};

/**
 * `CAPABILITY {"name": …, "body": …}` (the JSON to the end of the line) makes the model call the
 * gateway's `execute_capability` through whichever MCP entry offers it (opencode names MCP tools
 * `<entry>_<tool>`): an agent in a session starting another one.
 */
function capabilityCall(text: string, tools: readonly string[]): { name: string; args: Record<string, unknown> } | undefined {
  const match = /CAPABILITY (\{.*\})\s*$/m.exec(text);
  const tool = tools.find((name) => name.endsWith("execute_capability"));
  if (!match || !tool) return undefined;
  return { name: tool, args: JSON.parse(match[1]!) as Record<string, unknown> };
}

/**
 * `STEPS <n>`: a turn of n + 1 model calls, as an agent working through a task step after step —
 * the model writes the todo list (`todowrite`, which asks nobody) n times, then answers. Each
 * call reports its usage, so each of opencode's steps has a cost. With `PACE <ms>`, each tool
 * call is answered that much later.
 */
function stepCall(text: string, tools: readonly string[], messages: { role: string }[]): { name: string; args: Record<string, unknown> } | undefined {
  const steps = Number(/STEPS (\d+)/.exec(text)?.[1] ?? 0);
  const lastUserAt = messages.findLastIndex((m) => m.role === "user");
  const done = messages.slice(lastUserAt + 1).filter((m) => m.role === "tool").length;
  return done < steps && tools.includes("todowrite")
    ? { name: "todowrite", args: { todos: [{ content: `Step ${done + 1}`, status: "completed", priority: "high" }] } }
    : undefined;
}

/** What each answer says it used. */
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** Word-by-word replies: the marker, how many words follow the reply, and the pause between words. */
const PACES: Record<string, { extraWords: number; everyMs: number }> = {
  SLOW: { extraWords: 40, everyMs: 300 },
  STREAM: { extraWords: 50, everyMs: 20 },
};

/**
 * A tiny OpenAI-compatible chat-completions server: it answers `FAKE_REPLY: <last user text>`,
 * streamed. A prompt containing `SLOW` streams one word every 300 ms (for stop tests and live
 * text), `STREAM` one every 20 ms for about a second (a model typing, for the cost of a turn); one containing `FAIL500` is answered 500, as a provider that is down (opencode retries);
 * the {@link TOOL_MARKERS} (and `CAPABILITY`, see `capabilityCall`) make it call a tool first, and `STEPS <n>` (see
 * `stepCall`) n tools one after another.
 */
export async function startFakeLlm(): Promise<{ url: string; requests: FakeLlmRequest[]; close(): Promise<void> }> {
  const requests: FakeLlmRequest[] = [];
  const server = createServer(async (request, response) => {
    const body = JSON.parse((await readBody(request)) || "{}") as ChatRequest;
    const messages = body.messages ?? [];
    const lastUserText = lastUser(messages);
    const last = messages.at(-1);
    const toolResult = last?.role === "tool" ? textOf(last.content) : undefined;
    const tools = (body.tools ?? []).map((t) => t.function?.name ?? "");
    requests.push({
      path: request.url ?? "",
      lastUserText,
      stream: body.stream === true,
      tools,
      at: Date.now(),
      ...(toolResult !== undefined ? { toolResult } : {}),
    });
    if (lastUserText.includes("FAIL500")) {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "fake provider is down", type: "server_error" } }));
      return;
    }
    // Only when the tool is offered: opencode also asks the model for a title, with no tools.
    const toolCall =
      toolResult === undefined
        ? (capabilityCall(lastUserText, tools) ??
          Object.entries(TOOL_MARKERS).find(([marker, call]) => lastUserText.includes(marker) && tools.includes(call.name))?.[1] ??
          stepCall(lastUserText, tools, messages))
        : stepCall(lastUserText, tools, messages);
    const reply = toolResult === undefined ? `FAKE_REPLY: ${lastUserText}` : `FAKE_REPLY: the tool said ${toolResult.slice(0, 200)}`;
    const pace = Object.entries(PACES).find(([marker]) => lastUserText.includes(marker))?.[1];
    const pieces = pace ? [...reply.split(" ").map((w) => `${w} `), ...Array(pace.extraWords).fill("more ")] : [reply];
    const delay = pace?.everyMs ?? 0;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "fake-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    // Every streamed answer ends with its usage, as a provider asked for it reports.
    const usageChunk = `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", choices: [], usage: USAGE })}\n\n`;
    if (body.stream !== true) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
          usage: USAGE,
        }),
      );
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write(chunk({ role: "assistant", content: "" }));
    if (toolCall) {
      // `PACE <ms>`: each tool step takes that long, as a model thinking before it calls.
      const pace = Number(/PACE (\d+)/.exec(lastUserText)?.[1] ?? 0);
      if (pace > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(pace, 10_000)));
      const call = { index: 0, id: `call_${requests.length}`, type: "function", function: { name: toolCall.name, arguments: JSON.stringify(toolCall.args) } };
      response.write(chunk({ tool_calls: [call] }));
      response.write(chunk({}, "tool_calls"));
      response.write(usageChunk);
      response.end("data: [DONE]\n\n");
      return;
    }
    for (const piece of pieces) {
      if (response.destroyed) return;
      response.write(chunk({ content: piece }));
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    }
    response.write(chunk({}, "stop"));
    response.write(usageChunk);
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

interface ChatRequest {
  messages?: { role: string; content: unknown }[];
  stream?: boolean;
  tools?: { function?: { name?: string } }[];
}

function lastUser(messages: { role: string; content: unknown }[]): string {
  const user = [...messages].reverse().find((m) => m.role === "user");
  return user ? textOf(user.content) : "";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : "")).join("");
  }
  return "";
}
