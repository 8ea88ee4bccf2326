import { z } from "zod";
import { fail } from "./errors/session-error.js";
import { SESSION_LIMITS as L } from "./limits.js";
import type { Budget } from "./ledger/session-budget.js";
import type { Spend } from "./ledger/session-spend.js";
import { boundText } from "./transcript/transcript-message.js";
import { EngineAnswerSchema, type RespondAnswer, RespondAnswerSchema } from "./wire/respond-answer.js";

/** A choice a question offers. */
export interface PendingOption {
  label: string;
  description?: string;
}

/**
 * What a `waiting_input` session asks the human: a permission for a tool call, a question, or
 * (`budget`) whether to raise a budget its spend reached. Answer it with `respond` and its `id`.
 */
export interface PendingInput {
  kind: "permission" | "question" | "budget";
  /** The target's id of the request: `respond`'s `requestId`. */
  id: string;
  /** One line: the permission (`bash`) or the question's header. */
  title: string;
  /** What it is about (the command, the whole question), bounded. */
  detail: string;
  /**
   * A question's choices; answering with one's label picks it. A permission has none: its
   * answers are always `once`, `always` or `reject`.
   */
  options?: PendingOption[];
  /** When the target first reported it. */
  askedAt?: string;
  /** It has waited longer than the gateway's input timeout: nobody answered. */
  overdue?: boolean;
  /** Only the person at the desktop can answer it, in the app (an OpenWork desktop asks): `respond` cannot. */
  inAppOnly?: boolean;
  /** A budget request: `session` when its own budget was reached, `tree` when one above it (`budgetOf`). */
  scope?: "session" | "tree";
  /** A budget request: the session whose budget was reached. */
  budgetOf?: string;
  /** A budget request: that budget, and what its tree spent against it. */
  budget?: Budget;
  spent?: Spend;
  /** A budget request: what happened and what the member may do, in one sentence. */
  message?: string;
}

/** Builds a `pending` block with every text bounded, so a target's report can never grow a read. */
export function pendingInput(input: PendingInput): PendingInput {
  const options = input.options?.slice(0, L.pendingOptions).map((o) => ({
    label: boundText(o.label, L.pendingTitle).text,
    ...(o.description ? { description: boundText(o.description, L.pendingTitle).text } : {}),
  }));
  return {
    kind: input.kind,
    id: input.id,
    title: boundText(input.title, L.pendingTitle).text,
    detail: boundText(input.detail, L.pendingDetail).text,
    ...(options?.length ? { options } : {}),
    ...(input.askedAt ? { askedAt: input.askedAt } : {}),
    ...(input.overdue ? { overdue: true } : {}),
    ...(input.inAppOnly ? { inAppOnly: true } : {}),
  };
}

/** What a target's `respond` receives: an answer for its engine (the gateway answers budgets itself). */
export const EngineRespondInputSchema = z.strictObject({
  requestId: z
    .string()
    .min(1)
    .max(L.requestId)
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only"),
  answer: EngineAnswerSchema,
});
export type EngineRespondInput = z.infer<typeof EngineRespondInputSchema>;

/** `respond`'s arguments after the session id. */
export const RespondInputSchema = EngineRespondInputSchema.extend({ answer: RespondAnswerSchema });
export type RespondInput = z.infer<typeof RespondInputSchema>;

// Which answer each kind of request takes, and how to say so when another comes.
const FITTING_ANSWER: Record<PendingInput["kind"], { key: string; hint: string }> = {
  permission: { key: "permission", hint: 'this request asks for a permission: answer {"permission": "once" | "always" | "reject"}' },
  question: { key: "text", hint: 'this request asks a question: answer {"text": "<your answer>"}' },
  budget: {
    key: "budget",
    hint: 'this request asks for a budget: answer {"budget": {"tokens"?, "costUsd"?, "runningMs"?}} with higher numbers, or stop the session',
  },
};

/** Refuses an answer that does not fit its request: decisions answer permissions, text questions, budgets budgets. */
export function checkAnswerFits(kind: PendingInput["kind"], answer: RespondAnswer): void {
  const fitting = FITTING_ANSWER[kind];
  if (fitting.key in answer) return;
  fail("invalid_capability_arguments", fitting.hint);
}

/** The refusal of an answer to a request the session does not wait on (answered, withdrawn, never asked). */
export function inputNotPending(requestId: string): never {
  return fail("input_not_pending", `the session is not waiting on ${requestId} (answered already, or never asked); read it to see what it waits on now`);
}
