import { describe, expect, it } from "vitest";
import { emailNotifier } from "./email-notifier.js";
import { InvalidNotification } from "./notification-event.js";
import type { ChannelRules, Notifier } from "./notifier.js";
import { createNotifyChannels } from "./notify-channels.js";
import { useNotifyDatabase } from "./testing/notify-database.js";
import { webhookNotifier } from "./webhook-notifier.js";

// Channel kinds are values the caller passes in: the store checks each channel by its notifier's
// rules, and SQL only the kind's format (migration 0009).
const db = useNotifyDatabase();
const ORG = "org_channel_kinds";
const common = { memberId: "member_kinds", eventKinds: ["waiting_input" as const] };

/** A kind of the caller's own: a target that starts with `pager:`, a PIN as its secret. */
const pagerRules: ChannelRules = {
  target: "a pager number (pager:…)",
  secret: true,
  accept: async ({ target, secret }) =>
    target.startsWith("pager:") && secret !== undefined
      ? { target, secret }
      : { issues: [{ path: target.startsWith("pager:") ? "secret" : "target", message: "a pager number and its PIN" }] },
};
const pager: Notifier = { kind: "pager", channels: pagerRules, send: async () => {} };
const sendOnly: Notifier = { kind: "audit", send: async () => {} };

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as InvalidNotification,
  );
const rowsOf = async (memberId: string) => db.current.sql<{ kind: string; secret: string | null }[]>`
  select kind, secret from notify_channel where organization_id = ${ORG} and member_id = ${memberId} order by created_at`;

describe("channel kinds", () => {
  it("stores a channel of a caller's kind with what its rules kept", async () => {
    const channels = createNotifyChannels(db.current.sql, { notifiers: [pager] });
    const { channel, secret } = await channels.create(ORG, { ...common, memberId: "member_pager", kind: "pager", target: "pager:0042", secret: "1234" });
    expect(channel).toMatchObject({ kind: "pager", target: "pager:0042" });
    expect(secret).toBe("1234");
    expect(channels.kinds()).toEqual([{ kind: "pager", target: "a pager number (pager:…)", secret: true }]);
    expect(await rowsOf("member_pager")).toEqual([{ kind: "pager", secret: "1234" }]);
  });

  it("refuses a kind with no rules (none given, or a notifier that only sends) on kind, and what the rules refuse on its field, writing nothing", async () => {
    const channels = createNotifyChannels(db.current.sql, { notifiers: [pager, sendOnly] });
    const cases = [
      [{ kind: "webhook", target: "https://hooks.example.com/x" }, "kind"],
      [{ kind: "audit", target: "anything" }, "kind"],
      [{ kind: "pager", target: "tel:0042", secret: "1234" }, "target"],
      [{ kind: "pager", target: "pager:0042" }, "secret"],
      [{ kind: "Pager!", target: "pager:0042" }, "kind"],
    ] as const;
    for (const [input, path] of cases) {
      const error = await refusal(channels.create(ORG, { ...common, ...input }));
      expect(error, input.kind).toBeInstanceOf(InvalidNotification);
      expect(error?.issues, input.kind).toEqual([{ path, message: expect.any(String) }]);
    }
    expect(await rowsOf(common.memberId)).toEqual([]);
  });

  it("takes the notifiers' own rules for webhook and email: a webhook's secret is made, an email refuses one", async () => {
    const channels = createNotifyChannels(db.current.sql, {
      notifiers: [webhookNotifier(), emailNotifier({ transport: { sendMail: async () => ({}) }, from: "n@example.com" })],
    });
    const hook = await channels.create(ORG, { ...common, memberId: "member_hook", kind: "webhook", target: "https://93.184.215.14/hook" });
    expect(hook.secret).toMatch(/^whsec_/);
    const error = await refusal(channels.create(ORG, { ...common, memberId: "member_hook", kind: "email", target: "a@example.com", secret: "x" }));
    expect(error?.issues).toEqual([{ path: "secret", message: "email channels take no secret" }]);
    expect(await rowsOf("member_hook")).toEqual([{ kind: "webhook", secret: hook.secret }]);
  });

  it("refuses a notifier whose kind the database would not take, at once", () => {
    expect(() => createNotifyChannels(db.current.sql, { notifiers: [{ ...pager, kind: "Pager" }] })).toThrow(TypeError);
  });

  it("lets SQL check only a kind's format and a secret's length", async () => {
    let made = 0;
    const insert = (kind: string, secret: string | null) => db.current.sql`
      insert into notify_channel (organization_id, id, member_id, kind, target, secret, event_kinds)
      values (${ORG}, ${`nch_${String(++made).padStart(26, "0")}`}, 'member_sql', ${kind}, 'x', ${secret}, '{waiting_input}')`;
    await expect(insert("bad kind", null)).rejects.toThrow(/notify_channel_kind_check/);
    await expect(insert("slack", "")).rejects.toThrow(/notify_channel_secret_check/);
    await insert("slack", null);
    await insert("webhook_like", "s");
    expect(await rowsOf("member_sql")).toHaveLength(2);
  });
});
