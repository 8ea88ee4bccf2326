import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Sql } from "postgres";
import { z } from "zod";
import { parseOrThrow } from "./notification-event.js";

/** The longest an answer link may live: it stands in for a sign-in, so it must not outlast a glance at the phone. */
export const MAX_ANSWER_LINK_TTL_MS = 15 * 60_000;

const id = z.string().min(1).max(200);
/** What one link answers: one member's one pending request in one session. */
export const AnswerLinkTargetSchema = z.strictObject({ organizationId: id, memberId: id, sessionId: id, requestId: id });
export type AnswerLinkTarget = z.infer<typeof AnswerLinkTargetSchema>;

/** What an opened link lets its holder do: answer `requestId` as `memberId`, until `expiresAt`. */
export interface LinkGrant extends AnswerLinkTarget {
  linkId: string;
  expiresAt: Date;
  /** Embed it in the page's form; `redeem` refuses a POST without it (a page of another link has another). */
  antiForgery: string;
}

/** How long a redeem holds its claim on a link while the answer is sent: longer than a desktop's relay wait (20 s). */
export const ANSWER_LEASE_MS = 60_000;

export type AnswerLinkErrorCode = "link_invalid" | "link_expired" | "link_used" | "link_busy" | "forgery";

const MESSAGES: Record<AnswerLinkErrorCode, string> = {
  link_invalid: "this answer link is not valid",
  link_expired: "this answer link has expired",
  link_used: "this answer link was already used",
  link_busy: "an answer on this answer link is being sent",
  forgery: "the form's anti-forgery token does not belong to this link",
};

/** Why a link was refused; the refusal changed nothing. The message names no request and no text. */
export class AnswerLinkError extends Error {
  readonly code: AnswerLinkErrorCode;
  constructor(code: AnswerLinkErrorCode) {
    super(MESSAGES[code]);
    this.name = "AnswerLinkError";
    this.code = code;
  }
}

export interface AnswerLinksOptions {
  /** Where `notify_answer_link` is (migrated by `migrateSessionNotify`). */
  sql: Sql;
  /** The HMAC-SHA256 key that signs links and derives anti-forgery tokens: at least 32 bytes, the same on every replica. */
  secret: string | Uint8Array;
  /** How long a minted link lives. Default and most: 15 minutes. */
  ttlMs?: number;
  /** The clock of mint and of every check (tests set it). Default: the process's clock. */
  now?: () => Date;
}

export interface AnswerLinks {
  /** A new link to `target`'s request: the token goes into the notification's URL; only its id and signature are in it. */
  mint(target: AnswerLinkTarget): Promise<{ token: string; expiresAt: Date }>;
  /** The grant of a valid, unused, unexpired link (the page shows the request and a form), or why not. Changes nothing. */
  open(token: string): Promise<LinkGrant | AnswerLinkError>;
  /**
   * Spends the link in two short steps, holding no transaction (nor a pooled connection) while
   * `run` answers: a committed claim leases the link for `ANSWER_LEASE_MS`, then `run` is called,
   * then the link is marked used (when `run` returned) or its lease is cleared (when `run` threw:
   * the link is usable again and the error propagates, so the page can offer to try again). A
   * redeem while another is in flight is refused at once with `link_busy`; so exactly one of
   * concurrent redeems runs `run`. When a replica dies between the answer and the mark, the lease
   * lapses and the link can be redeemed again: `run` must be idempotent for that replay (the
   * gateway's respond is: the same answer to the same request replays the first).
   */
  redeem<T>(token: string, antiForgery: string, run: (grant: LinkGrant) => Promise<T>): Promise<{ grant: LinkGrant; result: T } | AnswerLinkError>;
}

// 16 random bytes and two HMAC-SHA256 digests, base64url.
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

interface LinkRow extends AnswerLinkTarget {
  linkId: string;
  expiresAt: Date;
  usedAt: Date | null;
}

const COLUMNS = `id as "linkId", organization_id as "organizationId", member_id as "memberId", session_id as "sessionId",
  request_id as "requestId", expires_at as "expiresAt", used_at as "usedAt"`;

/**
 * Single-use, short-lived, signed links to a page the host serves, where a member answers one
 * pending permission or question without signing in. Throws at creation on a short secret or a
 * `ttlMs` outside (0, 15 min].
 */
export function createAnswerLinks(options: AnswerLinksOptions): AnswerLinks {
  const { sql } = options;
  const ttlMs = options.ttlMs ?? MAX_ANSWER_LINK_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > MAX_ANSWER_LINK_TTL_MS) {
    throw new RangeError(`answer links: ttlMs must be more than 0 and at most ${MAX_ANSWER_LINK_TTL_MS} (15 minutes); got ${ttlMs}`);
  }
  const key = typeof options.secret === "string" ? Buffer.from(options.secret, "utf8") : Buffer.from(options.secret);
  if (key.length < 32) throw new RangeError(`answer links: the secret must be at least 32 bytes; got ${key.length}`);
  const now = options.now ?? (() => new Date());
  // Two purposes, two messages: a link's signature never passes as its anti-forgery token, nor the reverse.
  const mac = (purpose: string, linkId: string) => createHmac("sha256", key).update(`${purpose}\u0000${linkId}`).digest("base64url");
  const signedId = (token: string): string | null => {
    const match = TOKEN.exec(token);
    return match && same(match[2]!, mac("answer-link", match[1]!)) ? match[1]! : null;
  };
  const grantOf = (row: LinkRow): LinkGrant => {
    const { linkId, organizationId, memberId, sessionId, requestId, expiresAt } = row;
    return { linkId, organizationId, memberId, sessionId, requestId, expiresAt, antiForgery: mac("anti-forgery", linkId) };
  };
  /** Why a signed link cannot be used now. */
  const refusal = (row: LinkRow | undefined, at: Date): AnswerLinkError | null => {
    if (!row) return new AnswerLinkError("link_invalid");
    if (row.usedAt !== null) return new AnswerLinkError("link_used");
    return row.expiresAt <= at ? new AnswerLinkError("link_expired") : null;
  };
  const find = async (linkId: string) =>
    (
      await sql<
        LinkRow[]
      >`/* across organizations: a link is found by its random id */ select ${sql.unsafe(COLUMNS)} from notify_answer_link where id = ${linkId}`
    )[0];

  return {
    mint: async (input) => {
      const target = parseOrThrow(AnswerLinkTargetSchema, input, "answer link target");
      const linkId = randomBytes(16).toString("base64url");
      const expiresAt = new Date(now().getTime() + ttlMs);
      await sql`
        insert into notify_answer_link (id, organization_id, member_id, session_id, request_id, expires_at)
        values (${linkId}, ${target.organizationId}, ${target.memberId}, ${target.sessionId}, ${target.requestId}, ${expiresAt})`;
      return { token: `${linkId}.${mac("answer-link", linkId)}`, expiresAt };
    },
    open: async (token) => {
      const linkId = signedId(token);
      if (linkId === null) return new AnswerLinkError("link_invalid");
      const row = await find(linkId);
      return refusal(row, now()) ?? grantOf(row!);
    },
    redeem: async <T>(token: string, antiForgery: string, run: (grant: LinkGrant) => Promise<T>) => {
      const linkId = signedId(token);
      if (linkId === null) return new AnswerLinkError("link_invalid");
      if (!same(antiForgery, mac("anti-forgery", linkId))) return new AnswerLinkError("forgery");
      const at = now();
      const lease = new Date(at.getTime() + ANSWER_LEASE_MS);
      // One committed statement claims the link: a concurrent redeem finds the lease and is refused, never waits.
      const [claimed] = await sql<LinkRow[]>`
        /* across organizations: a link is found by its random id */
        update notify_answer_link set answering_until = ${lease}
        where id = ${linkId} and used_at is null and expires_at > ${at} and (answering_until is null or answering_until <= ${at})
        returning ${sql.unsafe(COLUMNS)}`;
      if (!claimed) return refusal(await find(linkId), at) ?? new AnswerLinkError("link_busy");
      const grant = grantOf(claimed);
      const result = await run(grant).catch(async (error: unknown) => {
        // Only this redeem's lease: a lapsed one may have been taken by another since.
        await sql`update notify_answer_link set answering_until = null where id = ${linkId} and used_at is null and answering_until = ${lease}`;
        throw error;
      });
      await sql`update notify_answer_link set used_at = ${now()}, answering_until = null where id = ${linkId} and used_at is null`;
      return { grant, result };
    },
  };
}

/** Constant-time equality of two tokens (a length mismatch is no secret: the format fixes it). */
function same(given: string, expected: string): boolean {
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
