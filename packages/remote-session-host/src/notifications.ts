import { hkdfSync } from "node:crypto";
import {
  type AnswerLinks,
  createAnswerLinks,
  createNotifyChannels,
  type DeliveryLaneLimits,
  type EmailTransport,
  emailNotifier,
  type Notifier,
  type NotificationDrain,
  type NotificationDrainOptions,
  type SmtpOptions,
  startNotificationDrain,
  webhookNotifier,
} from "@openwork/session-notify";
import type { NotificationLog } from "@openwork/mcp-capability";
import type { SentNotification } from "@openwork/mcp-capability/internal";
import type { Logger, MemberScope } from "@openwork/remote-session-core";
import type { MemberOfUser } from "./answer-requests.js";
import type { Sql } from "postgres";

/**
 * How the host tells members what their sessions did (webhooks always; email when SMTP is set;
 * more channel kinds through `notifiers`), and who the members are to the outbox.
 */
export interface HostNotifyOptions {
  /**
   * The user id of a member: the outbox keys each event by the session's owner user, so a read's
   * `notified` and the member routes find the member's deliveries and channels through it.
   */
  userOf(scope: MemberScope): Promise<string | null>;
  /** The active member a user is in an organization (an answer link names the user), or null. */
  memberOf: MemberOfUser;
  /** Serve the answer page (`answerPage` of the host's notifications). Default true. */
  answerPage?: boolean;
  /** More notifiers (a channel kind of the host's own, e.g. chat), beside webhooks and email. */
  notifiers?: readonly Notifier[];
  /** Sends in flight at once, per member and per channel. Default `DEFAULT_DELIVERY_LANES`. */
  lanes?: Partial<DeliveryLaneLimits>;
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

/** The notification parts of a host, before its drain starts: the notifiers, the member's channels, the answer links. */
export interface NotifyParts {
  notifiers: Notifier[];
  /** The member's channels, of the kinds of `notifiers` (each checks its own targets). */
  channels: ReturnType<typeof createNotifyChannels>;
  /** The channel kinds this host sends to: email only with SMTP. */
  kinds: ReadonlySet<string>;
  /** Kinds the host knows but cannot send to as configured, with what its operator would set: a create of one is refused as unavailable. */
  unavailable: ReadonlyMap<string, string>;
  links: AnswerLinks;
}

/** Why email channels cannot be created without SMTP: the member is told it is the operator's to set up, not a mistake of theirs. */
const NO_SMTP = "this gateway has no SMTP server: email channels cannot be created (its operator sets SMTP_URL and NOTIFY_FROM)";

/**
 * The notifiers (webhooks always, the host's own `notifiers`, email with `smtp`), the member's
 * channels of their kinds and the answer links of `options`: what the member routes and the
 * answer page need before the drain starts. `secret` is the host's runner-token secret; the
 * answer links' key is derived from it under a label of its own unless `answerLinkSecret` is given.
 */
export function notifyParts(sql: Sql, options: HostNotifyOptions, secret: string): NotifyParts {
  if (options.smtp && !options.from) throw new TypeError("notify.from is required with notify.smtp (the From of notification mail)");
  const allowPrivateNetworks = options.allowPrivateNetworks === true;
  const email = options.smtp && options.from ? emailNotifier({ transport: options.smtp, from: options.from }) : null;
  const notifiers: Notifier[] = [webhookNotifier({ allowPrivateNetworks }), ...(options.notifiers ?? []), ...(email ? [email] : [])];
  const linkSecret = options.answerLinkSecret ?? Buffer.from(hkdfSync("sha256", secret, "", "openwork notify answer link v1", 32));
  const kinds = new Set(notifiers.map((notifier) => notifier.kind));
  return {
    notifiers,
    // Each kind's own notifier checks its targets: the webhook one with this host's allowPrivateNetworks.
    channels: createNotifyChannels(sql, { notifiers }),
    kinds,
    unavailable: new Map(kinds.has("email") ? [] : [["email", NO_SMTP]]),
    links: createAnswerLinks({ sql, secret: linkSecret, ...(options.answerLinkTtlMs ? { ttlMs: options.answerLinkTtlMs } : {}) }),
  };
}

/**
 * Starts the outbox drain (on every replica: any may send, none sends a delivery another holds).
 * Migrates the notification tables into the handle's schema, after the core and desktop migrations.
 */
export function startDrain(
  sql: Sql,
  options: HostNotifyOptions,
  parts: NotifyParts,
  more: Pick<NotificationDrainOptions, "describe" | "wake" | "overdueAfterMs" | "schema"> & { logger: Logger },
): Promise<NotificationDrain> {
  return startNotificationDrain({
    sql,
    notifiers: parts.notifiers,
    ...more,
    ...(options.intervalMs ? { intervalMs: options.intervalMs } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.sendTimeoutMs ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
    ...(options.lanes ? { lanes: options.lanes } : {}),
  });
}

/**
 * What the capability's reads show as `notified`: the deliveries sent to the session's owner
 * about it (channel kind, when, what of), the latest few. `scope.memberId` is the membership id
 * a read carries; the outbox keys its events by the owner's user id, found through `userIdOf`.
 */
export function sentNotificationsLog(sql: Sql, userIdOf: (scope: MemberScope) => Promise<string | null>): NotificationLog {
  return {
    sentFor: async (scope, sessionId, since) => {
      const userId = await userIdOf(scope);
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
