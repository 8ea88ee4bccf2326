import type { NotificationEvent } from "./notification-event.js";

export type ChannelKind = "webhook" | "email";

/** The channel a delivery goes to, as its member set it. */
export interface DeliveryChannel {
  id: string;
  kind: ChannelKind;
  /** The webhook's URL or the email address. */
  target: string;
  /** The webhook's signing secret (`whsec_…`); null for email. */
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

/** A channel adapter: sends one delivery, or throws (a `NotifyError` says whether a retry may help). */
export interface Notifier {
  readonly kind: ChannelKind;
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
