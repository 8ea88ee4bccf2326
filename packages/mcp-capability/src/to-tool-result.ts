import type { SessionError } from "@openwork/remote-session-core";

/** An MCP tool result, as den-api's registry and the SDK both take it. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function successResult(payload: Record<string, unknown>, text: string): ToolResult {
  return { content: [{ type: "text", text }], structuredContent: payload };
}

/** An error as a value: `isError`, readable text with the human step, and the value itself. */
export function errorResult(error: SessionError): ToolResult {
  const lines = [`${error.error}: ${error.message}`];
  if (error.action) lines.push(`What to do: ${error.action}`);
  if (error.retryable) lines.push(`Retryable${error.retryAfterMs ? ` after ${error.retryAfterMs} ms` : ""}: call again with the same arguments.`);
  lines.push(`Reference: ${error.referenceId}`);
  return { isError: true, content: [{ type: "text", text: lines.join("\n") }], structuredContent: { ...error } };
}
