import type { NotificationEvent } from "./notification-event.js";

/**
 * A channel kind's name: a notifier's `kind` (`webhook` and `email` here; a host adds its own).
 * Kinds are values a host passes in, so the database checks only this format (migration 0009).
 */
export type ChannelKind = string;

/** The format of a kind's name: what `notify_channel.kind` accepts. */
export const CHANNEL_KIND_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/;

/** The channel a delivery goes to, as its member set it. */
export interface DeliveryChannel {
  id: string;
  kind: ChannelKind;
  /** Where its notifier sends (a webhook's URL, an email address), as the kind's `accept` kept it. */
  target: string;
  /** The secret the kind's `accept` kept (a webhook's signing secret, `whsec_…`); null for a kind without one. */
  secret: string | null;
  allowText: boolean;
}

/** One event on its way to one channel. `event.text` is absent unless the channel allows text. */
export interface NotificationDelivery {
  event: NotificationEvent;
  channel: DeliveryChannel;
  /** 1 on the first try; a retry after a crash counts the lost try too. */
  attempt: number;
  /** A link where the member answers the pending request (the drain's `describe` adds it); it carries no text. */
  answerUrl?: string;
}

/** What a member gave for a channel's destination: the rest of the channel is the same for every kind. */
export interface ChannelTargetInput {
  target: string;
  /** Only kinds with a secret take one; others refuse it. */
  secret?: string;
}

/** What is kept of an accepted channel: its target and its secret (null for a kind without one). */
export interface AcceptedTarget {
  target: string;
  secret: string | null;
}

/** Why a target or secret was refused: the field and a message the member can act on. */
export interface TargetIssue {
  path: "target" | "secret";
  message: string;
}

/**
 * How members make channels of a kind: the notifier's rules, so neither the channel store nor a
 * host's member routes name kinds.
 */
export interface ChannelRules {
  /** What a target of this kind is, in a few words (member routes show it), e.g. "an http(s) URL". */
  readonly target: string;
  /** Whether a channel of this kind keeps a secret, handed to its member once, when it is made. */
  readonly secret: boolean;
  /**
   * Checks a member's target (and secret) before anything is written: what to keep, or why not.
   * May look things up (a webhook resolves its host); nothing else is written meanwhile.
   */
  accept(input: ChannelTargetInput): Promise<AcceptedTarget | { issues: TargetIssue[] }>;
}

/** A channel adapter: sends one delivery, or throws (a `NotifyError` says whether a retry may help). */
export interface Notifier {
  readonly kind: ChannelKind;
  /** How members make channels of this kind. Without it the notifier only sends: members cannot create channels of its kind. */
  readonly channels?: ChannelRules;
  send(delivery: NotificationDelivery, signal: AbortSignal): Promise<void>;
}

export type NotifyErrorCode = "timeout" | "unreachable" | "rejected" | "misconfigured";

/**
 * A failed send. `retryable`: a later try may succeed (timeouts, connection failures, a 5xx, 408,
 * 429, an SMTP 4xx); otherwise the delivery goes straight to `dead` (a 4xx, an SMTP 5xx, a bad target).
 * Any other error a notifier throws counts as retryable.
 */
export class NotifyError extends Error {
  readonly code: NotifyErrorCode;
  readonly retryable: boolean;
  constructor(message: string, options: { code: NotifyErrorCode; retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "NotifyError";
    this.code = options.code;
    this.retryable = options.retryable;
  }
}
