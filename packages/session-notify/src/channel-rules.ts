import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { AcceptedTarget, ChannelRules, TargetIssue } from "./notifier.js";
import { webhookTargetRefusal } from "./webhook-address.js";

const WEBHOOK_URL = z.url({ protocol: /^https?$/ }).max(2000);
const WEBHOOK_SECRET = z.string().regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, "a webhook secret is whsec_ and at least 32 base64 characters");
const EMAIL_ADDRESS = z.email().max(320);

/** The issues of `value` against `schema`, all on `path` (the field a member gave). */
export function fieldIssues(schema: z.ZodType, value: unknown, path: TargetIssue["path"]): TargetIssue[] {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => ({ path, message: issue.message }));
}

/** A kind without a secret refuses one: silently dropping it would let its member believe the channel is signed. */
export const secretRefused = (secret: string | undefined, kind: string): TargetIssue[] =>
  secret === undefined ? [] : [{ path: "secret", message: `${kind} channels take no secret` }];

/**
 * Webhook channels: an http(s) URL without credentials whose host is no non-public address
 * (unless `allowPrivateNetworks`), signed with the member's `whsec_…` secret or one made here.
 */
export function webhookChannels(options: { allowPrivateNetworks?: boolean } = {}): ChannelRules {
  return {
    target: "an http(s) URL, signed as Standard Webhooks with the channel's secret",
    secret: true,
    accept: async ({ target, secret }): Promise<AcceptedTarget | { issues: TargetIssue[] }> => {
      const issues = [...fieldIssues(WEBHOOK_URL, target, "target"), ...(secret === undefined ? [] : fieldIssues(WEBHOOK_SECRET, secret, "secret"))];
      if (issues.length > 0) return { issues };
      // Looked up only once the URL is well-formed: a malformed one never costs a DNS query.
      const refused = await webhookTargetRefusal(target, options);
      if (refused) return { issues: [{ path: "target", message: refused }] };
      return { target, secret: secret ?? `whsec_${randomBytes(32).toString("base64")}` };
    },
  };
}

/** Email channels: an address, no secret. */
export const emailChannels: ChannelRules = {
  target: "an email address",
  secret: false,
  accept: async ({ target, secret }) => {
    const issues = [...fieldIssues(EMAIL_ADDRESS, target, "target"), ...secretRefused(secret, "email")];
    return issues.length > 0 ? { issues } : { target, secret: null };
  },
};
