import { hkdfSync } from "node:crypto";
import {
  createAnswerLinks,
  createNotifyChannels,
  type EmailTransport,
  emailNotifier,
  type Notifier,
  type NotificationDrain,
  type NotificationDrainOptions,
  type SmtpOptions,
  startNotificationDrain,
  webhookNotifier,
} from "@openwork/session-notify";
import type { NotificationLog, SentNotification } from "@openwork/mcp-capability";
import type { Logger } from "@openwork/remote-session-core";
import type { Sql } from "postgres";

/** How the gateway tells members what their sessions did (webhooks always; email when SMTP is set). */
export interface GatewayNotifyOptions {
  /** Where mail is handed over; without it members cannot create email channels. */
  smtp?: SmtpOptions | EmailTransport;
  /** The From of notification mail, e.g. `OpenWork <notify@example.com>`. Required with `smtp`. */
  from?: string;
  /** How often each replica looks at the outbox besides when a session hint wakes it (the backstop). Default 1 000 ms. */
  intervalMs?: number;
  /** Tries before a delivery is dead (default 8), and the wait before each retry (tests shorten them). */
  maxAttempts?: number;
  backoff?: (attempt: number) => number;
  /**
   * Whether a session hint on the wake bus (any replica's committed session change) wakes the
   * drain at once. Default true; off, notifications wait for the next `intervalMs`.
   */
  wakeOnHints?: boolean;
  /**
   * Let webhooks target loopback and private addresses (127.0.0.1, 10/8, …). Off by default: a
   * member could otherwise make the gateway post into its own network. Tests and single-machine
   * setups turn it on.
   */
  allowPrivateNetworks?: boolean;
  /** A send is aborted after this long. Default 10 000 ms. */
  sendTimeoutMs?: number;
  /**
   * Signs answer links; the same on every replica. Default: derived from the runner-token
   * secret under a label of its own (a leak of one key signs nothing of the other's).
   */
  answerLinkSecret?: string;
  /** How long an answer link lives. Default and most: 15 minutes. */
  answerLinkTtlMs?: number;
}

/**
 * The notification half of the gateway: the outbox drain (on every replica: any may send, none
 * sends a delivery another holds) and the member's channels. Migrates the tables into the handle's
 * schema, after the core and desktop migrations.
 */
export async function startNotifications(
  sql: Sql,
  options: GatewayNotifyOptions & {
    overdueAfterMs?: number;
    describe?: NotificationDrainOptions["describe"];
    wake?: NotificationDrainOptions["wake"];
  },
  logger: Logger,
) {
  if (options.smtp && !options.from) throw new TypeError("notify.from is required with notify.smtp (NOTIFY_FROM)");
  const allowPrivateNetworks = options.allowPrivateNetworks === true;
  const notifiers: Notifier[] = [webhookNotifier({ allowPrivateNetworks })];
  if (options.smtp && options.from) notifiers.push(emailNotifier({ transport: options.smtp, from: options.from }));
  const drain: NotificationDrain = await startNotificationDrain({
    sql,
    notifiers,
    logger,
    ...(options.intervalMs ? { intervalMs: options.intervalMs } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.sendTimeoutMs ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
    ...(options.overdueAfterMs ? { overdueAfterMs: options.overdueAfterMs } : {}),
    ...(options.describe ? { describe: options.describe } : {}),
    ...(options.wake ? { wake: options.wake } : {}),
  });
  return {
    drain,
    channels: createNotifyChannels(sql, { allowPrivateNetworks }),
    /** The channel kinds a member may create here: email only with SMTP. */
    kinds: new Set(notifiers.map((notifier) => notifier.kind)),
  };
}

export type GatewayNotifications = Awaited<ReturnType<typeof startNotifications>>;

/** The answer links of this gateway (the page redeems what the drain's `describe` mints). */
export function gatewayAnswerLinks(sql: Sql, options: GatewayNotifyOptions & { runnerTokenSecret: string }) {
  const secret = options.answerLinkSecret ?? Buffer.from(hkdfSync("sha256", options.runnerTokenSecret, "", "openwork notify answer link v1", 32));
  return createAnswerLinks({ sql, secret, ...(options.answerLinkTtlMs ? { ttlMs: options.answerLinkTtlMs } : {}) });
}

/**
 * SMTP settings from a URL: `smtp://user:pass@host:587` (STARTTLS when offered; `?requireTLS=1`
 * refuses without it) or `smtps://…:465` (TLS from the start). User and password are URL-decoded.
 */
export function smtpFromUrl(url: string): SmtpOptions {
  // The messages never quote the URL: it may hold a password.
  if (!URL.canParse(url)) throw new TypeError("not a URL");
  const parsed = new URL(url);
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") throw new TypeError("must start with smtp:// or smtps://");
  const secure = parsed.protocol === "smtps:";
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    ...(parsed.username ? { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } } : {}),
    ...(parsed.searchParams.get("requireTLS") === "1" ? { requireTLS: true } : {}),
  };
}

/**
 * What the capability's reads show as `notified`: the deliveries sent to the session's owner
 * about it (channel kind, when, what of), the latest few. `scope.memberId` is the membership id
 * a read carries; the outbox keys its events by the owner's user id, found through `userIdOf`.
 */
export function sentNotificationsLog(sql: Sql, userIdOf: (scope: { organizationId: string; memberId: string }) => string | null): NotificationLog {
  return {
    sentFor: async (scope, sessionId, since) => {
      const userId = userIdOf(scope);
      if (userId === null) return [];
      return sql<SentNotification[]>`
        select c.kind as channel, d.sent_at as at, e.kind
        from notify_event e
        join notify_delivery d on d.organization_id = e.organization_id and d.event_id = e.id
        join notify_channel c on c.organization_id = d.organization_id and c.id = d.channel_id
        where e.organization_id = ${scope.organizationId} and e.session_id = ${sessionId} and e.member_id = ${userId}
          and d.status = 'sent' and (${since ?? null}::timestamptz is null or d.sent_at >= ${since ?? null}::timestamptz)
        order by d.sent_at desc limit 10`;
    },
  };
}
