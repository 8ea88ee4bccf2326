import { randomUUID } from "node:crypto";
import type { AuthInfo, ServerContext } from "@modelcontextprotocol/server";
import { errorPayload, sessionError } from "@openwork/remote-session-core";
import {
  type AskedAnswer,
  type AskedCodec,
  askableRead,
  elicitationOf,
  type Execute,
  type ExecuteArgs,
  type Executed,
  readToAsk,
  replyAnswer,
  respondOnce,
  structuredOf,
} from "./elicit-answers.js";

// The 2025 era asks the human by a server-to-client `elicitation/create` on the stream of the
// request being answered, and the client posts the reply as a JSON-RPC response — to whichever
// replica its load balancer picks. So the request's id is the sealed state of what was asked: any
// replica verifies the reply (the caller's, unaltered, unexpired) and answers through respond.
export const ASK_ID_PREFIX = "io.openwork/ask:";

/** How a human's reply ended: answered (through respond, on any replica), or declined, cancelled, unfit. */
export type AskOutcome = "answered" | "not_answered";

/**
 * The waiting reads of this process that asked, by the id of what they asked: a reply that reaches
 * this process settles its read at once. (One that reaches another replica settles it only when
 * it answered, which moves the session; a decline there leaves the read waiting its `waitMs` out.)
 */
export function createAskWaiters() {
  const waiting = new Map<string, (outcome: AskOutcome) => void>();
  return {
    /** Resolves with the reply's outcome, or with null when `signal` aborts first. */
    wait(id: string, signal: AbortSignal): Promise<AskOutcome | null> {
      return new Promise((resolve) => {
        const done = (outcome: AskOutcome | null) => {
          waiting.delete(id);
          signal.removeEventListener("abort", aborted);
          resolve(outcome);
        };
        const aborted = () => done(null);
        if (signal.aborted) return done(null);
        waiting.set(id, done);
        signal.addEventListener("abort", aborted, { once: true });
      });
    },
    settle(id: string, outcome: AskOutcome): void {
      waiting.get(id)?.(outcome);
    },
  };
}

export type AskWaiters = ReturnType<typeof createAskWaiters>;

/** A message the gateway sends on a call's stream: a request (with an id) or a notification. */
export interface StreamMessage {
  jsonrpc: "2.0";
  id?: string;
  method: string;
  params: Record<string, unknown>;
}

/** A 2025-era request's way to its client's human: the codec, its stream, and this process's waiting reads. */
export interface LegacyAsking {
  codec: AskedCodec;
  waiters: AskWaiters;
  /** Sends a server-to-client message on the stream of request `relatedRequestId`. */
  send(message: StreamMessage, relatedRequestId: string | number): Promise<void>;
}

/**
 * `execute_capability` for a 2025-era client that declared elicitation at `initialize`
 * (`mcpClientCapabilities` on its auth, kept with its stateful session): a waiting read of a
 * session that asks something the caller has not seen sends `elicitation/create` on the call's
 * stream and goes on waiting. An accepted reply is answered through respond by whichever replica
 * it reaches, and the read then returns what followed, from the caller's cursor; declined or
 * cancelled, the read is answered as it is (`waiting_input`, `respond` as its next step). When
 * the read ends with the question still open (its time ran out, or the session moved without
 * it), the question is withdrawn (`notifications/cancelled`) so no stale form stays open.
 */
export async function executeAskingLegacy(asking: LegacyAsking, execute: Execute, args: ExecuteArgs, ctx: ServerContext): Promise<Executed> {
  const body = askableRead(args, ctx);
  if (!body) return execute(args);
  const started = Date.now();
  const { result, question } = await readToAsk(execute, args, body, declaredAtInitialize(ctx.http?.authInfo));
  if (!question) return result;
  const { sessionId, pending } = question;
  // A nonce of its own: two reads asking the same question at once send two distinct requests.
  const id = ASK_ID_PREFIX + (await asking.codec.mint({ sessionId, requestId: pending.id, nonce: randomUUID() }, ctx));
  await asking.send({ jsonrpc: "2.0", id, method: "elicitation/create", params: elicitationOf(pending, "legacy") }, ctx.mcpReq.id);
  const left = () => Math.max(0, Number(body.waitMs) - (Date.now() - started));
  const settled = new AbortController();
  try {
    // The session moving (answered here or on another replica, or by anyone else), or this process's reply.
    const moved = execute({ name: args.name, body: { sessionId, cursor: structuredOf(result)?.cursor, waitMs: left() } }, settled.signal).then(
      () => "moved" as const,
    );
    const outcome = await Promise.race([moved, asking.waiters.wait(id, settled.signal)]);
    if (outcome === "moved") await withdraw(asking, id, ctx.mcpReq.id);
    if (outcome === "not_answered") return result;
    return await execute({ ...args, body: { ...body, waitMs: left() } });
  } finally {
    settled.abort();
  }
}

/** The elicitation capability a 2025-era client declared at `initialize`, as the `legacy` wrapper remembered it on the auth. */
export function declaredAtInitialize(auth: AuthInfo | undefined): unknown {
  return (auth?.extra?.mcpClientCapabilities as { elicitation?: unknown } | undefined)?.elicitation;
}

/** Withdraws a question the client may still show (best effort: its stream may be gone). */
async function withdraw(asking: LegacyAsking, id: string, relatedRequestId: string | number): Promise<void> {
  const reason = "the read that asked has ended; read the session again to see what it waits on";
  await asking.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } }, relatedRequestId).catch(() => {});
}

/** Whether `message` (a POST's body) is only replies to what the gateway asked in the 2025 era. */
export function isAskReplies(message: unknown): message is AskReply | AskReply[] {
  const replies = Array.isArray(message) ? message : [message];
  return replies.length > 0 && replies.every(isAskReply);
}

/** A client's JSON-RPC reply to an `elicitation/create` the gateway sent. */
interface AskReply {
  id: string;
  result?: { action?: unknown; content?: Record<string, unknown> };
  error?: unknown;
}

function isAskReply(message: unknown): message is AskReply {
  if (typeof message !== "object" || message === null) return false;
  const { id, method } = message as { id?: unknown; method?: unknown };
  return typeof id === "string" && id.startsWith(ASK_ID_PREFIX) && method === undefined && ("result" in message || "error" in message);
}

/**
 * Takes the replies a 2025-era client posts to what the gateway asked, on any replica. All are
 * checked before any is answered — each sealed by this gateway, for this caller, unexpired, and an
 * accepted one fitting its question; else 400 and nothing happens — then each accepted answer goes
 * through respond as the caller (one already answered: 409 `input_not_pending`) and the waiting
 * read of this process is settled. 202 once all are taken.
 */
export async function takeAskReplies(
  asking: Pick<LegacyAsking, "codec" | "waiters">,
  replies: AskReply | AskReply[],
  auth: AuthInfo,
  execute: Execute,
): Promise<Response> {
  const ctx = { http: { authInfo: auth } } as ServerContext;
  const taken: { id: string; answer: AskedAnswer | null }[] = [];
  for (const reply of Array.isArray(replies) ? replies : [replies]) {
    const asked = await asking.codec.verify(reply.id.slice(ASK_ID_PREFIX.length), ctx).catch(() => null);
    if (!asked) return refused(400, sessionError("invalid_capability_arguments", NOT_ASKED));
    const answer = reply.result ? replyAnswer(asked, reply.result) : null;
    if (!answer && reply.result?.action === "accept") return refused(400, sessionError("invalid_capability_arguments", UNFIT));
    taken.push({ id: reply.id, answer });
  }
  for (const { id, answer } of taken) {
    const failed = answer ? await respondOnce(execute, answer) : null;
    const payload = failed ? (structuredOf(failed) ?? {}) : null;
    // Answered — by this reply, or before it (the session moved either way): the read goes on.
    asking.waiters.settle(id, answer && (!payload || payload.error === "input_not_pending") ? "answered" : "not_answered");
    if (payload) return Response.json(payload, { status: REFUSED_STATUS[String(payload.error)] ?? 400 });
  }
  return new Response(null, { status: 202 });
}

const refused = (status: number, error: Parameters<typeof errorPayload>[0]) => Response.json(errorPayload(error), { status });

const NOT_ASKED = "this reply answers nothing this gateway asked you: its id was altered, has expired, or is another caller's; nothing was answered";
const UNFIT = "an accepted answer must fill the form it was asked with (a permission: once, always or reject; a question: its text); nothing was answered";
// A refused answer's status: answered already (a replay), or the member's limits; any other refusal is a 400.
const REFUSED_STATUS: Record<string, number> = { input_not_pending: 409, rate_limited: 429 };
