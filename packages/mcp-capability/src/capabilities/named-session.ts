import { fail } from "@openwork/remote-session-core";
import { z } from "zod";
import type { RunEnv } from "../run-env.js";

/**
 * How `read` and `stop` name their session: by `sessionId`, or, as OpenWork's callers do, by the
 * receipt a target handed out for it — a desktop create's `commandId`, a relayed request's
 * `requestId`. Exactly one.
 */
export const namedSessionShape = {
  sessionId: z.string().min(1).max(160).optional().describe("A sessionId from remote-session:create or remote-session:list."),
  commandId: z.string().min(1).max(160).optional().describe("Or a create's commandId."),
  requestId: z.string().min(1).max(160).optional().describe("Or a send's requestId."),
};

type NamedSession = { sessionId?: string | undefined; commandId?: string | undefined; requestId?: string | undefined };

/** The refinement every schema with `namedSessionShape` takes. */
export const exactlyOneSession: [(named: NamedSession) => boolean, { message: string; path: string[] }] = [
  (named) => [named.sessionId, named.commandId, named.requestId].filter((id) => id !== undefined).length === 1,
  { message: "exactly one of sessionId, commandId or requestId is required", path: ["sessionId"] },
];

/**
 * The session a call names: its `sessionId`, or the one a target's receipt belongs to (asked of
 * every target; each looks among this member's own work only). An unknown receipt is OpenWork's
 * `unknown_command` / `unknown_request`, with the step to take.
 */
export async function namedSessionId(env: RunEnv, named: NamedSession): Promise<string> {
  if (named.sessionId !== undefined) return named.sessionId;
  const receipt = named.commandId !== undefined ? { commandId: named.commandId } : { requestId: named.requestId ?? "" };
  for (const target of env.catalog.targets) {
    const found = await target.sessionOfReceipt?.(env.call, receipt);
    if (found) return found;
  }
  return receipt.commandId !== undefined
    ? fail("unknown_command", `no command ${receipt.commandId} of yours is known here`)
    : fail("unknown_request", `no request ${receipt.requestId} of yours is known here`);
}
