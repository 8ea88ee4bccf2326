import { CLIENT_CAPABILITIES_META_KEY, createRequestStateCodec, inputRequired, inputResponse, type ServerContext } from "@modelcontextprotocol/server";
import { sessionError } from "@openwork/remote-session-core";
import { observationOf, observedIn, type PendingInput } from "@openwork/remote-session-core/internal";
import type { z } from "zod";
import type { SkillToolResult } from "./builtin-skill-source.js";
import type { EXECUTE_TOOL } from "./mcp-tools.js";
import { errorResult, type ToolResult } from "./to-tool-result.js";

/** Asking the caller's human directly (MCP 2026-07-28 elicitation): off unless a host gives its secret. */
export interface ElicitAnswersOptions {
  /**
   * The HMAC key (at least 32 bytes) sealing what the gateway asked (`requestState`): the same on
   * every replica, since the answer may reach another one.
   */
  secret: string;
  /** How long a question asked stays answerable this way. Default 600 s. */
  ttlSeconds?: number;
}

/** What a sealed `requestState` says the gateway asked: which session, which of its requests. */
export interface Asked {
  sessionId: string;
  requestId: string;
  /** Makes each ask's sealed value its own (a 2025-era ask's is its JSON-RPC id). */
  nonce?: string;
}

// The one embedded request's key in `inputRequests` / `inputResponses`.
const ANSWER = "answer";

/** The codec of what was asked: sealed with the host's secret, bound to the caller (organization and user). */
export function askedCodec(options: ElicitAnswersOptions) {
  return createRequestStateCodec<Asked>({
    key: options.secret,
    ttlSeconds: options.ttlSeconds ?? 600,
    // The member and the credential it came through: another member, or a session's engine
    // holding the same member's organization and user, presents a state that does not verify.
    bind: (ctx: ServerContext) => {
      const auth = ctx.http?.authInfo;
      const extra = auth?.extra ?? {};
      return [extra.organizationId, extra.userId, extra.memberId, extra.remoteSessionId, auth?.clientId].map((part) => String(part ?? "")).join("\u0000");
    },
  });
}

export type AskedCodec = ReturnType<typeof askedCodec>;

/** Whether a client's elicitation capability (`declared`) takes forms: an empty one does (the spec's default). */
export function elicitsForms(declared: unknown): boolean {
  if (typeof declared !== "object" || declared === null) return false;
  const { form, url } = declared as { form?: unknown; url?: unknown };
  return form !== undefined || url === undefined;
}

/**
 * The question a read's result may put to the human: the session waits on one `respond` can
 * answer, and the caller's cursor has not seen it (a question the caller was shown — asked, or
 * declined — is left to `respond`, not asked again).
 */
function newQuestionIn(result: Executed, cursor: unknown): PendingInput | null {
  const payload = structuredOf(result);
  const pending = payload?.pending as PendingInput | undefined;
  // A budget is raised by the member through respond (its next step), with numbers of their choosing.
  if (result.isError || payload?.state !== "waiting_input" || !pending || pending.inAppOnly || pending.kind === "budget") return null;
  const seen = typeof cursor === "string" ? observedIn(String(payload.sessionId), cursor) : undefined;
  return seen === observationOf({ state: "waiting_input", pending }) ? null : pending;
}

/** What a read asks the human: the question, and the session it belongs to (the read may name it by a command or request id). */
export interface Question {
  sessionId: string;
  pending: PendingInput;
}

/**
 * A waiting read (`body.waitMs` > 0) of a caller whose human takes forms (`declared`: its
 * elicitation capability), and the question it may put to that human. A session already waiting
 * on a question the caller has not seen is looked at without waiting, so the human is asked at
 * once rather than after `waitMs`; any other read runs as it is. A session's engine never gets
 * here (`askableRead`).
 */
export async function readToAsk(
  execute: Execute,
  args: ExecuteArgs,
  body: Record<string, unknown>,
  declared: unknown,
): Promise<{ result: Executed; question: Question | null }> {
  if (typeof body.waitMs !== "number" || body.waitMs <= 0 || !elicitsForms(declared)) return { result: await execute(args), question: null };
  const now = await execute({ ...args, body: { ...body, waitMs: 0 } });
  const asks = newQuestionIn(now, body.cursor);
  if (asks) return { result: now, question: questionOf(now, asks) };
  const result = await execute(args);
  const pending = newQuestionIn(result, body.cursor);
  return { result, question: pending ? questionOf(result, pending) : null };
}

const questionOf = (result: Executed, pending: PendingInput): Question => ({ sessionId: String(structuredOf(result)?.sessionId), pending });

/** The elicitation capability a 2026-era request declares in its envelope (that era has no initialize to remember it from). */
function declaredInEnvelope(ctx: ServerContext): unknown {
  const envelope = (ctx.mcpReq as { envelope?: Record<string, unknown> }).envelope;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined)?.elicitation;
}

/**
 * The body of a `remote-session:read` whose caller's human may be asked; null for any other call,
 * and for a session's engine (a session credential), which is never asked and never answers this way.
 */
export function askableRead(args: ExecuteArgs, ctx: ServerContext): Record<string, unknown> | null {
  const spawned = ctx.http?.authInfo?.extra?.remoteSessionId !== undefined;
  const body = args.body;
  return spawned || args.name !== "remote-session:read" || typeof body !== "object" || body === null ? null : (body as Record<string, unknown>);
}

/** The `input_required` result asking the human `pending`, with the sealed state of what was asked. */
export async function askHuman(codec: AskedCodec, { sessionId, pending }: Question, ctx: ServerContext) {
  const requestState = await codec.mint({ sessionId, requestId: pending.id }, ctx);
  return inputRequired({ inputRequests: { [ANSWER]: inputRequired.elicit(elicitationOf(pending)) }, requestState });
}

/** An answer as `remote-session:respond` takes it. */
export type AskedAnswer = {
  sessionId: string;
  requestId: string;
  answer: Record<string, string>;
};

/**
 * The human's answer a retried read carries, as `respond` takes it: null when it declined,
 * cancelled, or answered with something that does not fit what was asked.
 */
export function answerOf(ctx: ServerContext, asked: Asked, body: Record<string, unknown>): AskedAnswer | null {
  // A read naming its session by a command or request id names none here: the sealed state does.
  if (body.sessionId !== undefined && body.sessionId !== asked.sessionId) return null;
  const response = inputResponse(ctx.mcpReq.inputResponses, ANSWER);
  return response.kind === "elicit" ? replyAnswer(asked, response) : null;
}

/** What an elicitation's reply answers to what was `asked`: null unless accepted with a permission, or a question's text. */
export function replyAnswer(asked: Asked, reply: { action?: unknown; content?: Record<string, unknown> | undefined }): AskedAnswer | null {
  if (reply.action !== "accept") return null;
  const { permission, text } = reply.content ?? {};
  const { sessionId, requestId } = asked;
  if (typeof permission === "string" && PERMISSION_CHOICES.some((choice) => choice.const === permission))
    return { sessionId, requestId, answer: { permission } };
  if (typeof text === "string" && text.length > 0) return { sessionId, requestId, answer: { text } };
  return null;
}

/** The verified state of a retried request (the SDK ran the codec before the handler), if it carries one. */
export function askedOf(ctx: ServerContext): Asked | null {
  const state = ctx.mcpReq.requestState<Asked>();
  return typeof state === "object" && state !== null && typeof state.sessionId === "string" ? state : null;
}

// A permission's answers and how the human reads them.
const PERMISSION_CHOICES = [
  { const: "once", title: "Allow once" },
  { const: "always", title: "Always allow" },
  { const: "reject", title: "Reject" },
] as const;

/**
 * The form the human fills in: a permission's three answers, or a question's text. `era`
 * "legacy" writes the permission's choices as `enum` with `enumNames`, which every 2025 revision
 * reads (the titled `oneOf` came with 2025-11-25).
 */
export function elicitationOf(pending: PendingInput, era: "legacy" | "modern" = "modern"): Parameters<typeof inputRequired.elicit>[0] {
  const message = `${pending.title}\n\n${pending.detail}`.trim();
  if (pending.kind === "permission") {
    const choices =
      era === "legacy"
        ? { enum: PERMISSION_CHOICES.map((c) => c.const), enumNames: PERMISSION_CHOICES.map((c) => c.title) }
        : { oneOf: PERMISSION_CHOICES.map((c) => ({ ...c })) };
    return {
      message,
      requestedSchema: { type: "object", properties: { permission: { type: "string", title: "Allow?", ...choices } }, required: ["permission"] },
    };
  }
  // A question takes any answer; its options are offered, not imposed.
  const choices = pending.options?.map((option) => option.label).join(", ");
  return {
    message,
    requestedSchema: {
      type: "object",
      properties: { text: { type: "string", title: pending.title, ...(choices ? { description: `For example: ${choices}` } : {}) } },
      required: ["text"],
    },
  };
}

/** `execute_capability`'s arguments, as the tool hands them on. */
export type ExecuteArgs = z.output<typeof EXECUTE_TOOL.inputSchema>;
export type Executed = ToolResult | SkillToolResult;
/** Runs one `execute_capability` call as the caller; `signal` ends a waiting read early. */
export type Execute = (args: ExecuteArgs, signal?: AbortSignal) => Promise<Executed>;

/**
 * `execute_capability` for a 2026-era client whose human may be asked directly: a waiting read of
 * a session that asks is answered `input_required` (the form, the sealed state); the read retried
 * with the human's answer responds through `remote-session:respond` — the one path answers take,
 * so it is recorded and notified once, and a second answer to the same request is refused as
 * `respond` refuses it — and then reads on. Declined or cancelled, the read is answered as it is
 * (the session still `waiting_input`, `respond` as its next step), and not asked again.
 */
export async function executeAsking(
  codec: AskedCodec,
  execute: Execute,
  args: ExecuteArgs,
  ctx: ServerContext,
): Promise<Executed | Awaited<ReturnType<typeof askHuman>>> {
  const body = askableRead(args, ctx);
  if (!body) return execute(args);
  const asked = askedOf(ctx);
  if (asked) {
    const answer = answerOf(ctx, asked, body);
    const refused = answer ? await respondOnce(execute, answer) : null;
    return refused ?? execute(args);
  }
  const { result, question } = await readToAsk(execute, args, body, declaredInEnvelope(ctx));
  return question ? askHuman(codec, question, ctx) : result;
}

/**
 * Answers the session's request through `remote-session:respond`, as the caller: null once
 * answered, else the error result. The same answer again (a replayed state) is respond's no-op;
 * here it is refused as such.
 */
export async function respondOnce(execute: Execute, answer: AskedAnswer): Promise<Executed | null> {
  const responded = await execute({ name: "remote-session:respond", body: answer });
  if (responded.isError) return responded;
  if (structuredOf(responded)?.alreadyAnswered !== true) return null;
  return errorResult(sessionError("input_not_pending", `${answer.requestId} was answered already; read the session to see what it waits on now`));
}

/** A capability's payload (a skill's result has none). */
export const structuredOf = (result: Executed): Record<string, unknown> | undefined =>
  "structuredContent" in result ? (result.structuredContent as Record<string, unknown>) : undefined;
