import { newId } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { Sql, TransactionSql } from "postgres";
import { z } from "zod";
import { emailChannels, webhookChannels } from "./channel-rules.js";
import { InvalidNotification, NOTIFICATION_KINDS, type NotificationKind, parseOrThrow } from "./notification-event.js";
import { type AcceptedTarget, CHANNEL_KIND_PATTERN, type ChannelKind, type ChannelRules, type Notifier } from "./notifier.js";

const common = {
  memberId: z.string().min(1).max(200),
  eventKinds: z.array(z.enum(NOTIFICATION_KINDS)).min(1).max(NOTIFICATION_KINDS.length),
  /** Whether prompt and answer text may leave through this channel. Default false. */
  allowText: z.boolean().optional(),
  enabled: z.boolean().optional(),
};

/**
 * A channel as its member sets it, the same for every kind. What `target` and `secret` may be is
 * the kind's (its notifier's `channels.accept`): a webhook's URL and optional `whsec_…` secret
 * (made when absent), an email address, a host's own kind's target.
 */
export const NotifyChannelInputSchema = z.strictObject({
  kind: z.string().regex(CHANNEL_KIND_PATTERN, "a channel kind is a lowercase name: a letter, then up to 39 letters, digits, _ or -"),
  target: z.string().min(1).max(2000),
  secret: z.string().min(1).max(500).optional(),
  ...common,
});
export type NotifyChannelInput = z.input<typeof NotifyChannelInputSchema>;

/** What a member may change of a channel once made: at least one of them. */
export const NotifyChannelPatchSchema = z
  .strictObject({ enabled: common.enabled, eventKinds: common.eventKinds.optional(), allowText: common.allowText })
  .refine((patch) => Object.keys(patch).length > 0, { message: "give at least one of enabled, eventKinds, allowText" });
export type NotifyChannelPatch = z.input<typeof NotifyChannelPatchSchema>;

/** A channel as listed: its secret is never read back (it is handed out once, at creation). */
export interface NotifyChannel {
  id: string;
  organizationId: string;
  memberId: string;
  kind: ChannelKind;
  target: string;
  eventKinds: NotificationKind[];
  allowText: boolean;
  enabled: boolean;
}

export interface NotifyChannelsOptions {
  /**
   * The kinds members may create, each by its notifier's `channels` (a notifier without them only
   * sends). Default: webhooks (with `allowPrivateNetworks`) and email. A kind not here is an
   * `InvalidNotification` on `kind`.
   */
  notifiers?: readonly Pick<Notifier, "kind" | "channels">[];
  /**
   * For the default webhook kind only: accept webhooks to loopback, private, link-local and other
   * non-public addresses. Off by default (such a target is an `InvalidNotification` on `target`).
   * For tests and hosts whose members are trusted; give the webhook notifier the same, or it
   * refuses them when sending. With `notifiers`, each notifier's rules decide.
   */
  allowPrivateNetworks?: boolean;
}

/** A kind members may create, as a host's routes describe it: what its target is, whether it keeps a secret. */
export interface ChannelKindSummary {
  kind: ChannelKind;
  target: string;
  secret: boolean;
}

/** A create refused because the member already keeps `limit` channels; nothing was written. */
export class TooManyChannels extends Error {
  constructor(readonly limit: number) {
    super(`a member keeps at most ${limit} notification channels; remove one first`);
    this.name = "TooManyChannels";
  }
}

/** Runs `fn` in a transaction: its own on a pool handle, a savepoint inside the caller's transaction. */
const inTransaction = <T>(sql: Queryable, fn: (tx: TransactionSql) => Promise<T>): Promise<T> =>
  "begin" in sql ? ((sql as Sql).begin(fn) as Promise<T>) : ((sql as TransactionSql).savepoint(fn) as Promise<T>);

/** The rules of each kind members may create here, by kind; a malformed kind name is a host's mistake, refused at once. */
function rulesByKind(options: NotifyChannelsOptions): ReadonlyMap<ChannelKind, ChannelRules> {
  const defaults = [
    { kind: "webhook", channels: webhookChannels({ allowPrivateNetworks: options.allowPrivateNetworks === true }) },
    { kind: "email", channels: emailChannels },
  ];
  const rules = new Map<ChannelKind, ChannelRules>();
  for (const { kind, channels } of options.notifiers ?? defaults) {
    if (!CHANNEL_KIND_PATTERN.test(kind)) throw new TypeError(`the notifier kind ${JSON.stringify(kind)} does not match ${CHANNEL_KIND_PATTERN}`);
    if (channels) rules.set(kind, channels);
  }
  return rules;
}

/** A refusal of what a member gave, as the routes answer every invalid channel. */
const invalidChannel = (issues: readonly { path: string; message: string }[]) =>
  new InvalidNotification("channel", new z.ZodError(issues.map(({ path, message }) => ({ code: "custom" as const, path: [path], message, input: undefined }))));

/** The target and secret `rules` keep of what the member gave, or an `InvalidNotification`. */
async function acceptedBy(rules: ReadonlyMap<ChannelKind, ChannelRules>, channel: z.output<typeof NotifyChannelInputSchema>): Promise<AcceptedTarget> {
  const kind = rules.get(channel.kind);
  if (!kind) {
    const known = [...rules.keys()].join(", ") || "none";
    throw invalidChannel([{ path: "kind", message: `no channel kind ${channel.kind} here (kinds: ${known})` }]);
  }
  const accepted = await kind.accept({ target: channel.target, ...(channel.secret === undefined ? {} : { secret: channel.secret }) });
  if ("issues" in accepted) throw invalidChannel(accepted.issues);
  return accepted;
}

/** A member's channels in PostgreSQL, for the member routes of a host (never for the model). */
export function createNotifyChannels(sql: Queryable, options: NotifyChannelsOptions = {}) {
  const rules = rulesByKind(options);
  return {
    /** The kinds members may create here, with what each takes (for a host's routes to show). */
    kinds: (): ChannelKindSummary[] => [...rules].map(([kind, { target, secret }]) => ({ kind, target, secret })),
    /**
     * Creates a channel; returns it with its secret (a webhook's; null for a kind without one),
     * which is not shown again. The kind's rules check its target and secret first: a kind with
     * no rules here, or a target they refuse (a webhook whose URL carries credentials or whose
     * host is or resolves to a non-public address), is an `InvalidNotification`. With
     * `maxPerMember`, a member who already keeps that many is refused (`TooManyChannels`); the
     * count and the insert run under a lock of that member's channels, so concurrent creates
     * cannot pass the cap together.
     */
    create: async (
      organizationId: string,
      input: NotifyChannelInput,
      limits: { maxPerMember?: number } = {},
    ): Promise<{ channel: NotifyChannel; secret: string | null }> => {
      const channel = parseOrThrow(NotifyChannelInputSchema, input, "channel");
      const { target, secret } = await acceptedBy(rules, channel);
      const row = await inTransaction(sql, async (tx) => {
        const { maxPerMember } = limits;
        if (maxPerMember !== undefined) {
          // Held to the commit: a concurrent create of the same member counts after this one's insert.
          // (The key is the pair as a JSON array: no separator a member id could forge.)
          await tx`select pg_advisory_xact_lock(hashtextextended(json_build_array('notify_channel', ${organizationId}::text, ${channel.memberId}::text)::text, 0))`;
          const [kept] = await tx<{ count: number }[]>`
            select count(*)::int as count from notify_channel where organization_id = ${organizationId} and member_id = ${channel.memberId}`;
          if ((kept?.count ?? 0) >= maxPerMember) throw new TooManyChannels(maxPerMember);
        }
        const [inserted] = await tx<NotifyChannel[]>`
          insert into notify_channel (organization_id, id, member_id, kind, target, secret, event_kinds, allow_text, enabled)
          values (${organizationId}, ${newId("nch")}, ${channel.memberId}, ${channel.kind}, ${target}, ${secret},
            ${channel.eventKinds}::text[], ${channel.allowText ?? false}, ${channel.enabled ?? true})
          returning ${tx.unsafe(COLUMNS)}`;
        return inserted!;
      });
      return { channel: row, secret };
    },
    list: (organizationId: string, memberId: string): Promise<NotifyChannel[]> =>
      sql<NotifyChannel[]>`
        select ${sql.unsafe(COLUMNS)} from notify_channel
        where organization_id = ${organizationId} and member_id = ${memberId} order by created_at, id`,
    /**
     * Changes what the member's channel takes: on or off, its event kinds, whether text may leave
     * (its target and secret stay). Null when the member has no such channel.
     */
    update: async (organizationId: string, memberId: string, id: string, patch: NotifyChannelPatch): Promise<NotifyChannel | null> => {
      const change = parseOrThrow(NotifyChannelPatchSchema, patch, "channel change");
      const [row] = await sql<NotifyChannel[]>`
        update notify_channel set enabled = coalesce(${change.enabled ?? null}::boolean, enabled),
          event_kinds = coalesce(${change.eventKinds ?? null}::text[], event_kinds), allow_text = coalesce(${change.allowText ?? null}::boolean, allow_text)
        where organization_id = ${organizationId} and member_id = ${memberId} and id = ${id}
        returning ${sql.unsafe(COLUMNS)}`;
      return row ?? null;
    },
    /** Removes the member's channel and what it still had to send; false when the member has no such channel. */
    remove: async (organizationId: string, memberId: string, id: string): Promise<boolean> => {
      const rows = await sql`delete from notify_channel where organization_id = ${organizationId} and member_id = ${memberId} and id = ${id} returning id`;
      return rows.length > 0;
    },
  };
}

export type NotifyChannels = ReturnType<typeof createNotifyChannels>;

const COLUMNS = `id, organization_id as "organizationId", member_id as "memberId", kind, target, event_kinds as "eventKinds",
  allow_text as "allowText", enabled`;
