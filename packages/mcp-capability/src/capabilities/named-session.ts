import { fail, SessionFailure } from "@openwork/remote-session-core";
import { z } from "zod";
import type { RunEnv } from "../run-env.js";

/**
 * How `read` and `stop` name their session: by `sessionId`, or, as OpenWork's callers do, by the
 * receipt a target handed out for it — a desktop create's `commandId`, a relayed request's
 * `requestId`. Exactly one.
 */
export const namedSessionShape = {
  sessionId: z.string().min(1).max(160).optional().describe("A sessionId from create or list (or give commandId or requestId instead)."),
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
 * The session a call names and its target: by `sessionId`, or by the receipt a target handed out
 * (asked of every target; each looks among this member's own work only). The session then goes
 * through the same checks as one named by id (a session's engine reaches only its own tree). A
 * receipt that names nothing the caller may reach is OpenWork's `unknown_command` /
 * `unknown_request`, whether it is unknown, another member's or outside the engine's tree.
 */
export async function namedSession(env: RunEnv, named: NamedSession, use: "read" | "stop") {
  if (named.sessionId !== undefined) return { sessionId: named.sessionId, ...(await env.session(named.sessionId, use)) };
  const receipt = named.commandId !== undefined ? { commandId: named.commandId } : { requestId: named.requestId ?? "" };
  const unknown = () =>
    receipt.commandId !== undefined
      ? fail("unknown_command", `no command ${receipt.commandId} of yours is known here`)
      : fail("unknown_request", `no request ${receipt.requestId} of yours is known here`);
  let sessionId: string | null = null;
  for (const target of env.catalog.targets) {
    sessionId ??= (await target.sessionOfReceipt?.(env.call, receipt)) ?? null;
  }
  if (!sessionId) return unknown();
  try {
    return { sessionId, ...(await env.session(sessionId, use)) };
  } catch (error) {
    if (SessionFailure.isInstance(error) && error.error.error === "unknown_session") return unknown();
    throw error;
  }
}
