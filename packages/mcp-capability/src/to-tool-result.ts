import { errorPayload, type SessionError } from "@openwork/remote-session-core";
import { boundPayload } from "./bound-payload.js";

/** An MCP tool result, as den-api's registry and both SDK generations take it. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: true;
}

/**
 * A result as den-api renders every remote-session outcome: one text part holding the compact
 * JSON of the payload (models that read only text see everything), the same payload in
 * `structuredContent` (models that read only JSON see everything), `isError` only on errors.
 */
export function toolResult(payload: Record<string, unknown>, isError = false): ToolResult {
  // Sized for the clients that read it: whichever of the two a client hands its model arrives whole.
  const bounded = boundPayload(payload);
  const result: ToolResult = { content: [{ type: "text", text: JSON.stringify(bounded) }], structuredContent: bounded };
  return isError ? { ...result, isError: true } : result;
}

/** An error value as a result: den-api's error payload, plus our `referenceId`. */
export const errorResult = (error: SessionError): ToolResult => toolResult(errorPayload(error), true);
