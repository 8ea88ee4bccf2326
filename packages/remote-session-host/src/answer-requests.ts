import { type RegistryContext, type RemoteSessionSource, remoteSessionContext } from "@openwork/mcp-capability";
import type { MemberScope, TranscriptMessage } from "@openwork/remote-session-core";
import type { PendingInput } from "@openwork/remote-session-core/internal";
import type { AnswerLinks, NotificationEvent } from "@openwork/session-notify";
import type { DeliveryChannel, NotificationDescription } from "@openwork/session-notify/internal";

export const ANSWER_PATH = "/notify/answer";
export const READ = { kind: "remoteSession", name: "remote-session:read" } as const;
export const RESPOND = { kind: "remoteSession", name: "remote-session:respond" } as const;
export const STOP = { kind: "remoteSession", name: "remote-session:stop" } as const;

/** Whom a link or a notification is for: the organization and the sessions' owner (a user id, as the outbox keys them). */
export interface Recipient {
  organizationId: string;
  memberId: string;
}

/** The active member a user is in an organization (the host's directory), or null when none. */
export type MemberOfUser = (recipient: Recipient) => Promise<MemberScope | null>;

/**
 * The capability context the answer page and the notifications act in for `recipient`: the
 * member whose user id it names, while an active member; else null. The member answers for
 * themselves, so the context has the write scope an agent's token may lack.
 */
export async function recipientContext(memberOf: MemberOfUser, recipient: Recipient): Promise<RegistryContext | null> {
  const member = await memberOf(recipient);
  return member
    ? remoteSessionContext({
        organizationId: recipient.organizationId,
        userId: recipient.memberId,
        orgMembershipId: member.memberId,
        scopes: ["mcp:read", "mcp:write"],
      })
    : null;
}

/** What a read of a link's session shows the page: its title, its last messages, and what it waits on. */
export interface SessionGlance {
  title: string;
  messages: TranscriptMessage[];
  pending?: PendingInput;
}

/** A read of the session's last `limit` messages through the capability; the typed error code when refused. */
export async function glanceAt(
  source: RemoteSessionSource,
  ctx: RegistryContext,
  sessionId: string,
  limit: number,
  signal?: AbortSignal,
): Promise<SessionGlance | { error: string }> {
  const read = await source.execute(ctx, READ, { body: { sessionId, from: "end", limit } }, signal ? { signal } : {});
  const result = (read.structuredContent ?? {}) as Partial<SessionGlance> & { error?: string };
  if (read.isError) return { error: result.error ?? "internal_error" };
  return { title: result.title ?? "", messages: result.messages ?? [], ...(result.pending ? { pending: result.pending } : {}) };
}

// Events that wait on the member's answer: their notification carries a link to answer it.
const ANSWERED_KINDS: ReadonlySet<NotificationEvent["kind"]> = new Set(["waiting_input", "request_overdue", "budget_reached"]);

/**
 * The drain's `describe`: for an event that waits on the member (`waiting_input`,
 * `request_overdue`, `budget_reached`), the question and an answer link to the request pending now, minted at send
 * time, for a channel that allows text only (the page shows the request and the last messages).
 * Nothing for other events, for a channel without text, for a session that no longer waits, or
 * for a request only the desktop's app can answer. A refused read (the
 * gateway could not reach the session) throws: the delivery is retried.
 */
export function describeForAnswer(options: {
  source: RemoteSessionSource;
  links: AnswerLinks;
  memberOf: MemberOfUser;
  baseUrl: string;
}): (event: NotificationEvent, channel: DeliveryChannel) => Promise<NotificationDescription | undefined> {
  return async (event, channel) => {
    // The drain asks only for channels with text; a link minted for any other would leak the request's text.
    if (!channel.allowText) return undefined;
    if (!ANSWERED_KINDS.has(event.kind)) return undefined;
    const ctx = await recipientContext(options.memberOf, event);
    if (!ctx) return undefined;
    const glance = await glanceAt(options.source, ctx, event.sessionId, 1);
    if ("error" in glance) {
      if (glance.error === "unknown_session") return undefined;
      throw new Error(`the session could not be read to describe its notification (${glance.error})`);
    }
    const { pending } = glance;
    if (!pending || pending.inAppOnly) return undefined;
    const { token } = await options.links.mint({
      organizationId: event.organizationId,
      memberId: event.memberId,
      sessionId: event.sessionId,
      requestId: pending.id,
    });
    return { text: { question: `${pending.title}: ${pending.detail}` }, answerUrl: `${options.baseUrl}${ANSWER_PATH}/${token}` };
  };
}
