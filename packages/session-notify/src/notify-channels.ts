import { randomBytes } from "node:crypto";
import { newId, type Queryable } from "@openwork/remote-session-core";
import type { Sql, TransactionSql } from "postgres";
import { z } from "zod";
import { InvalidNotification, NOTIFICATION_KINDS, type NotificationKind, parseOrThrow } from "./notification-event.js";
import type { ChannelKind } from "./notifier.js";
import { webhookTargetRefusal } from "./webhook-address.js";

const common = {
  memberId: z.string().min(1).max(200),
  eventKinds: z.array(z.enum(NOTIFICATION_KINDS)).min(1).max(NOTIFICATION_KINDS.length),
  /** Whether prompt and answer text may leave through this channel. Default false. */
  allowText: z.boolean().optional(),
  enabled: z.boolean().optional(),
};

/** A channel as its member sets it: a webhook (signed with `secret`, generated when absent) or an email address. */
export const NotifyChannelInputSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("webhook"),
    target: z.url({ protocol: /^https?$/ }).max(2000),
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/)
      .optional(),
    ...common,
  }),
  z.strictObject({ kind: z.literal("email"), target: z.email().max(320), ...common }),
]);
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
   * Accept webhooks to loopback, private, link-local and other non-public addresses. Off by
   * default (such a target is an `InvalidNotification` on `target`). For tests and hosts whose
   * members are trusted; give the webhook notifier the same, or it refuses them when sending.
   */
  allowPrivateNetworks?: boolean;
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

/** A member's channels in PostgreSQL, for the member routes of a host (never for the model). */
export function createNotifyChannels(sql: Queryable, options: NotifyChannelsOptions = {}) {
  return {
    /**
     * Creates a channel; returns it with its webhook secret (null for email), which is not shown
     * again. A webhook whose URL carries credentials or whose host is or resolves to a non-public
     * address is refused (`InvalidNotification`), unless `allowPrivateNetworks`. With
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
      const refused = channel.kind === "webhook" ? await webhookTargetRefusal(channel.target, options) : null;
      if (refused) throw new InvalidNotification("channel", new z.ZodError([{ code: "custom", path: ["target"], message: refused, input: channel.target }]));
      const secret = channel.kind === "webhook" ? (channel.secret ?? `whsec_${randomBytes(32).toString("base64")}`) : null;
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
          values (${organizationId}, ${newId("nch")}, ${channel.memberId}, ${channel.kind}, ${channel.target}, ${secret},
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
