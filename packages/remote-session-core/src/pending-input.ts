import { z } from "zod";
import { fail } from "./errors/session-error.js";
import { SESSION_LIMITS as L } from "./limits.js";
import { boundText } from "./transcript/transcript-message.js";
import { type RespondAnswer, RespondAnswerSchema } from "./wire/respond-answer.js";

/** A choice a question offers. */
export interface PendingOption {
  label: string;
  description?: string;
}

/**
 * What a `waiting_input` session asks the human: a permission for a tool call, or a question.
 * Answer it with `respond` and its `id`.
 */
export interface PendingInput {
  kind: "permission" | "question";
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

/** `respond`'s arguments after the session id. */
export const RespondInputSchema = z.strictObject({
  requestId: z
    .string()
    .min(1)
    .max(L.requestId)
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only"),
  answer: RespondAnswerSchema,
});
export type RespondInput = z.infer<typeof RespondInputSchema>;

/** Refuses an answer that does not fit its request: decisions answer permissions, text answers questions. */
export function checkAnswerFits(kind: PendingInput["kind"], answer: RespondAnswer): void {
  if (kind === "permission" ? "permission" in answer : "text" in answer) return;
  fail(
    "invalid_capability_arguments",
    kind === "permission"
      ? 'this request asks for a permission: answer {"permission": "once" | "always" | "reject"}'
      : 'this request asks a question: answer {"text": "<your answer>"}',
  );
}

/** The refusal of an answer to a request the session does not wait on (answered, withdrawn, never asked). */
export function inputNotPending(requestId: string): never {
  return fail("input_not_pending", `the session is not waiting on ${requestId} (answered already, or never asked); read it to see what it waits on now`);
}
