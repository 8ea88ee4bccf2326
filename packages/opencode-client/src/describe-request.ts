import type { PermissionRequest, QuestionRequest } from "./opencode-schemas.js";
import type { DescribedPermission, DescribedQuestion } from "./opencode-update.js";

/** A permission request in a person's words: the tool asked for, and the command (else the patterns) it would run. */
export function describePermission(request: PermissionRequest): DescribedPermission {
  const command = request.metadata?.command;
  return { kind: "permission", id: request.id, title: request.permission, detail: typeof command === "string" ? command : request.patterns.join("\n") };
}

/**
 * A question request in a person's words: the first question's header and options, every
 * question's text; null when it asks nothing.
 */
export function describeQuestion(request: QuestionRequest): DescribedQuestion | null {
  const first = request.questions[0];
  if (!first) return null;
  return {
    kind: "question",
    id: request.id,
    title: first.header,
    detail: request.questions.map((q) => q.question).join("\n"),
    options: first.options.map((o) => ({ label: o.label, ...(o.description === undefined ? {} : { description: o.description }) })),
    questions: request.questions.length,
  };
}
