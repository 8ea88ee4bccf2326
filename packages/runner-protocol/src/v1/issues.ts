import type { z } from "zod";

/** One problem of a rejected message, as the `issues` of an `invalid_request` body lists it. */
export interface MessageIssue {
  path: string;
  message: string;
}

/** The issues of a zod error in wire form (bounded to 50, paths dotted). */
export function toMessageIssues(error: z.ZodError): MessageIssue[] {
  return error.issues.slice(0, 50).map((issue) => ({
    path: issue.path.map(String).join(".").slice(0, 200),
    message: issue.message.slice(0, 500),
  }));
}

/** A one-line summary of the first few issues, for an error message. */
export function describeIssues(error: z.ZodError, count = 3): string {
  return toMessageIssues(error)
    .slice(0, count)
    .map((issue) => `${issue.path || "body"}: ${issue.message}`)
    .join("; ");
}
