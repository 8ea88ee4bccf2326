import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { Webhook } from "standardwebhooks";
import { webhookChannels } from "./channel-rules.js";
import { payloadOf } from "./notification-message.js";
import { type NotificationDelivery, type Notifier, NotifyError } from "./notifier.js";
import { literalRefusal, PrivateAddressRefused, publicOnlyLookup } from "./webhook-address.js";

/** HTTP statuses a later try may get past: a timeout, a rate limit, the receiver's own failures. */
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

export interface WebhookNotifierOptions {
  userAgent?: string;
  /**
   * Connect to loopback, private, link-local and other non-public addresses too. Off by default:
   * every address a webhook's host resolves to is checked when connecting, and a refused one fails
   * the delivery (`misconfigured`, not retried). For tests and hosts whose members are trusted.
   */
  allowPrivateNetworks?: boolean;
}

/**
 * Webhooks in the Standard Webhooks format: a JSON POST signed with the channel's secret, with
 * `webhook-id` = the event id (receivers dedupe by it: a retry carries the same one),
 * `webhook-timestamp` and `webhook-signature`. Any 2xx is success; redirects are not followed.
 * One connection per send (no pool), opened only to an address checked at that moment. Its
 * `channels` take an http(s) URL on a public address (any with `allowPrivateNetworks`) and a
 * `whsec_…` secret, made when the member gives none.
 */
export function webhookNotifier(options: WebhookNotifierOptions = {}): Notifier {
  return {
    kind: "webhook",
    channels: webhookChannels({ allowPrivateNetworks: options.allowPrivateNetworks === true }),
    send: async (delivery: NotificationDelivery, signal: AbortSignal): Promise<void> => {
      const { event, channel } = delivery;
      if (channel.secret === null) throw new NotifyError("the webhook channel has no secret", { code: "misconfigured", retryable: false });
      const timestamp = new Date();
      const body = payloadOf(event, timestamp, delivery.answerUrl);
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
      const status = await post(channel.target, headers, body, signal, options.allowPrivateNetworks === true).catch((error: unknown) => {
        throw sendFailure(error, signal);
      });
      if (status >= 200 && status < 300) return;
      throw new NotifyError(`the webhook answered ${status}`, { code: "rejected", retryable: RETRYABLE_STATUS(status) });
    },
  };
}

/** POSTs `body` and resolves with the status; the response body is not read (only the status counts). */
function post(target: string, headers: Record<string, string>, body: string, signal: AbortSignal, allowPrivate: boolean): Promise<number> {
  const url = new URL(target);
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Promise.reject(new NotifyError("only http and https webhooks are allowed", { code: "misconfigured", retryable: false }));
  }
  // A literal address is connected to without a lookup: it is checked here instead.
  const refused = allowPrivate ? null : literalRefusal(url);
  if (refused) return Promise.reject(refused);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        signal,
        // No pool: a pooled socket would skip the lookup, and with it the check.
        agent: false,
        ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

function sendFailure(error: unknown, signal: AbortSignal): NotifyError {
  if (error instanceof NotifyError) return error;
  if (error instanceof PrivateAddressRefused) return new NotifyError(error.message, { code: "misconfigured", retryable: false, cause: error });
  const timedOut = signal.aborted;
  return new NotifyError(timedOut ? "the webhook did not answer in time" : "the webhook could not be reached", {
    code: timedOut ? "timeout" : "unreachable",
    retryable: true,
    cause: error,
  });
}
