import type { z } from "zod";

/** One problem with a capability's arguments, listed in `invalid_capability_arguments` details. */
export interface ArgumentIssue {
  path: string;
  message: string;
}

/** The issues of a zod error, paths dotted, at most 50. */
export function toArgumentIssues(error: z.ZodError): ArgumentIssue[] {
  return error.issues.slice(0, 50).map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
}
