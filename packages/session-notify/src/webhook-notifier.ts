import { Webhook } from "standardwebhooks";
import { payloadOf } from "./notification-message.js";
import { type NotificationDelivery, type Notifier, NotifyError } from "./notifier.js";

/** HTTP statuses a later try may get past: a timeout, a rate limit, the receiver's own failures. */
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Webhooks in the Standard Webhooks format: a JSON POST signed with the channel's secret, with
 * `webhook-id` = the event id (receivers dedupe by it: a retry carries the same one),
 * `webhook-timestamp` and `webhook-signature`. Any 2xx is success; redirects are not followed.
 */
export function webhookNotifier(options: { fetch?: typeof fetch; userAgent?: string } = {}): Notifier {
  const send = options.fetch ?? fetch;
  return {
    kind: "webhook",
    send: async (delivery: NotificationDelivery, signal: AbortSignal): Promise<void> => {
      const { event, channel } = delivery;
      if (channel.secret === null) throw new NotifyError("the webhook channel has no secret", { code: "misconfigured", retryable: false });
      const timestamp = new Date();
      const body = payloadOf(event, timestamp);
      let signature: string;
      try {
        signature = new Webhook(channel.secret).sign(event.id, timestamp, body);
      } catch (error) {
        throw new NotifyError("the webhook secret is not a valid signing key", { code: "misconfigured", retryable: false, cause: error });
      }
      const headers = {
        "content-type": "application/json",
        "user-agent": options.userAgent ?? "openwork-session-notify",
        "webhook-id": event.id,
        "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
        "webhook-signature": signature,
      };
      const response = await send(channel.target, { method: "POST", headers, body, signal, redirect: "manual" }).catch((error: unknown) => {
        const timedOut = signal.aborted;
        throw new NotifyError(timedOut ? "the webhook did not answer in time" : "the webhook could not be reached", {
          code: timedOut ? "timeout" : "unreachable",
          retryable: true,
          cause: error,
        });
      });
      // The body is not read: only the status counts, and an unread body must not hold the socket.
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return;
      throw new NotifyError(`the webhook answered ${response.status}`, { code: "rejected", retryable: RETRYABLE_STATUS(response.status) });
    },
  };
}
