import { z } from "zod";

/**
 * What a member can be told of. A session asks (`waiting_input`); a turn an agent started ends
 * (`turn_idle`, `turn_failed`, `turn_stopped`); a store-and-forward task expires; a desktop is lost
 * mid-turn; a request nobody answered becomes overdue; a session's spend reaches a budget and it
 * pauses until the member raises it (`budget_reached`).
 */
export const NOTIFICATION_KINDS = [
  "waiting_input",
  "turn_idle",
  "turn_failed",
  "turn_stopped",
  "task_expired",
  "desktop_lost",
  "request_overdue",
  "budget_reached",
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

const id = z.string().min(1).max(200);
const text = z.string().max(20_000);

/** Prompt, question or answer text: it leaves only through channels whose member allowed text. */
export const NotificationTextSchema = z.strictObject({
  /** The prompt of the turn. */
  prompt: text.optional(),
  /** What a waiting session asks. */
  question: text.optional(),
  /** The turn's final answer. */
  answer: text.optional(),
});
export type NotificationText = z.infer<typeof NotificationTextSchema>;

/** One event a member can be told of; `id` is the event id, delivered at most once per channel's receiver (it dedupes by it). */
export const NotificationEventSchema = z.strictObject({
  id,
  kind: z.enum(NOTIFICATION_KINDS),
  organizationId: id,
  memberId: id,
  sessionId: id,
  /** The session's title: it may always leave. */
  title: z.string().max(500),
  /** The session's state after the event: it may always leave. */
  state: z.string().min(1).max(64),
  text: NotificationTextSchema.optional(),
  occurredAt: z.date(),
});
export type NotificationEvent = z.infer<typeof NotificationEventSchema>;

/** An event that does not satisfy `NotificationEventSchema` (or a channel its schema): nothing was written. */
export class InvalidNotification extends Error {
  readonly issues: readonly { path: string; message: string }[];
  constructor(what: string, error: z.ZodError) {
    super(`invalid ${what}: ${error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ")}`);
    this.name = "InvalidNotification";
    this.issues = error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
  }
}

/** `input` parsed by `schema`, or an `InvalidNotification` naming `what`. */
export function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new InvalidNotification(what, parsed.error);
  return parsed.data;
}
