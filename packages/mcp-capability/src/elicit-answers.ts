import { CLIENT_CAPABILITIES_META_KEY, createRequestStateCodec, inputRequired, inputResponse, type ServerContext } from "@modelcontextprotocol/server";
import { sessionError } from "@openwork/remote-session-core";
import type { PendingInput } from "@openwork/remote-session-core/internal";
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
interface Asked {
  sessionId: string;
  requestId: string;
}

// The one embedded request's key in `inputRequests` / `inputResponses`.
const ANSWER = "answer";
const PERMISSIONS = ["once", "always", "reject"] as const;

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

/**
 * Whether a waiting read's result may be put to the human directly: the session asks something
 * `respond` can answer, the caller declared form elicitation on this request, and it waits (a
 * read with `waitMs`). A session's engine never gets here (`executeAsking`).
 */
export function pendingToAsk(result: Executed, body: Record<string, unknown>, ctx: ServerContext): PendingInput | null {
  const payload = structuredOf(result);
  if (result.isError || !payload || typeof body.waitMs !== "number" || body.waitMs <= 0) return null;
  const pending = payload.pending as PendingInput | undefined;
  if (payload.state !== "waiting_input" || !pending || pending.inAppOnly) return null;
  // The capabilities this request declares (the 2026 era has no initialize to remember them from).
  const envelope = (ctx.mcpReq as { envelope?: Record<string, unknown> }).envelope;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  // An empty elicitation capability means form mode (the spec's default).
  const elicitation = declared?.elicitation;
  return elicitation && (elicitation.form !== undefined || elicitation.url === undefined) ? pending : null;
}

/** The `input_required` result asking the human `pending`, with the sealed state of what was asked. */
export async function askHuman(codec: AskedCodec, sessionId: string, pending: PendingInput, ctx: ServerContext) {
  const requestState = await codec.mint({ sessionId, requestId: pending.id }, ctx);
  return inputRequired({ inputRequests: { [ANSWER]: inputRequired.elicit(elicitationOf(pending)) }, requestState });
}

/**
 * The human's answer a retried read carries, as `respond` takes it: null when it declined,
 * cancelled, or answered with something that does not fit what was asked.
 */
export function answerOf(
  ctx: ServerContext,
  asked: Asked,
  body: Record<string, unknown>,
): { sessionId: string; requestId: string; answer: Record<string, string> } | null {
  if (body.sessionId !== asked.sessionId) return null;
  const response = inputResponse(ctx.mcpReq.inputResponses, ANSWER);
  if (response.kind !== "elicit" || response.action !== "accept") return null;
  const { permission, text } = response.content ?? {};
  if (typeof permission === "string" && (PERMISSIONS as readonly string[]).includes(permission)) return { ...asked, answer: { permission } };
  if (typeof text === "string" && text.length > 0) return { ...asked, answer: { text } };
  return null;
}

/** The verified state of a retried request (the SDK ran the codec before the handler), if it carries one. */
export function askedOf(ctx: ServerContext): Asked | null {
  const state = ctx.mcpReq.requestState<Asked>();
  return typeof state === "object" && state !== null && typeof state.sessionId === "string" ? state : null;
}

/** The form the human fills in: a permission's three answers, or a question's text. */
function elicitationOf(pending: PendingInput): Parameters<typeof inputRequired.elicit>[0] {
  const message = `${pending.title}\n\n${pending.detail}`.trim();
  if (pending.kind === "permission") {
    return {
      message,
      requestedSchema: {
        type: "object",
        properties: {
          permission: {
            type: "string",
            title: "Allow?",
            oneOf: [
              { const: "once", title: "Allow once" },
              { const: "always", title: "Always allow" },
              { const: "reject", title: "Reject" },
            ],
          },
        },
        required: ["permission"],
      },
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
type ExecuteArgs = z.output<typeof EXECUTE_TOOL.inputSchema>;
type Executed = ToolResult | SkillToolResult;

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
  execute: (args: ExecuteArgs) => Promise<Executed>,
  args: ExecuteArgs,
  ctx: ServerContext,
): Promise<Executed | Awaited<ReturnType<typeof askHuman>>> {
  const body = args.body;
  const spawned = ctx.http?.authInfo?.extra?.remoteSessionId !== undefined;
  // A session's engine is never asked, and never answers this way.
  if (spawned || args.name !== "remote-session:read" || typeof body !== "object" || body === null) return execute(args);
  const asked = askedOf(ctx);
  if (asked) {
    const answer = answerOf(ctx, asked, body as Record<string, unknown>);
    if (answer) {
      const responded = await execute({ name: "remote-session:respond", body: answer });
      if (responded.isError) return responded;
      // The same answer again (a replayed state) is respond's no-op; here it is refused as such.
      if (structuredOf(responded)?.alreadyAnswered === true)
        return errorResult(sessionError("input_not_pending", `${answer.requestId} was answered already; read the session to see what it waits on now`));
    }
    return execute(args);
  }
  const result = await execute(args);
  const pending = pendingToAsk(result, body as Record<string, unknown>, ctx);
  return pending ? askHuman(codec, String((body as Record<string, unknown>).sessionId), pending, ctx) : result;
}

/** A capability's payload (a skill's result has none). */
const structuredOf = (result: Executed): Record<string, unknown> | undefined =>
  "structuredContent" in result ? (result.structuredContent as Record<string, unknown>) : undefined;
