import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enqueueNotification } from "./enqueue-notification.js";
import { startNotificationDrain } from "./notification-drain.js";
import { InvalidNotification } from "./notification-event.js";
import { NotifyError } from "./notifier.js";
import { createNotifyChannels } from "./notify-channels.js";
import { closeAfterEach, useNotifyDatabase } from "./testing/notify-database.js";
import { startWebhookReceiver } from "./testing/receivers.js";
import { refusedAddress } from "./webhook-address.js";
import { webhookNotifier } from "./webhook-notifier.js";

// Webhooks never reach the host's own network (SSRF): refused when the member creates the
// channel, and again when the notifier connects (the name may resolve elsewhere by then).
const db = useNotifyDatabase();
const closing = closeAfterEach();
const ORG = "org_ssrf";

const webhook = (target: string) => ({ memberId: "member_ssrf", kind: "webhook" as const, target, eventKinds: ["turn_idle" as const] });

const REFUSED = [
  "http://127.0.0.1/hook",
  "http://127.1.2.3:8080/hook",
  "http://2130706433/hook", // 127.0.0.1 as one number: URL parsing normalises it
  "http://0x7f.0.0.1/hook",
  "http://localhost:3000/hook", // resolves to 127.0.0.1
  "http://10.0.0.5/hook",
  "http://172.16.0.1/hook",
  "http://172.31.255.254/hook",
  "http://192.168.1.10/hook",
  "http://169.254.169.254/latest/meta-data",
  "http://100.64.0.1/hook",
  "http://100.127.255.254/hook",
  "http://0.0.0.0/hook",
  "http://0.1.2.3/hook",
  "http://224.0.0.1/hook",
  "http://255.255.255.255/hook",
  "http://[::]/hook",
  "http://[::1]/hook",
  "http://[fe80::1]/hook",
  "http://[febf::1]/hook",
  "http://[fc00::1]/hook",
  "http://[fd12:3456::1]/hook",
  "http://[ff02::1]/hook",
  "http://[::ffff:127.0.0.1]/hook",
  "http://[::ffff:10.0.0.1]/hook",
  "http://[::ffff:a9fe:a9fe]/hook",
  "http://[64:ff9b::7f00:1]/hook", // NAT64 of 127.0.0.1
  "http://[64:ff9b::10.1.2.3]/hook", // NAT64 of 10.1.2.3
  "http://[64:ff9b:1::5]/hook",
  "http://192.0.0.1/hook", // IETF protocol assignments (192.0.0/24)
  "http://192.0.0.170/hook",
  "http://198.18.0.1/hook", // benchmarking (198.18/15)
  "http://198.19.255.254/hook",
  "http://[::ffff:0:7f00:1]/hook", // IPv4-translated 127.0.0.1
  "http://[::ffff:0:10.0.0.1]/hook", // IPv4-translated 10.0.0.1
  "http://[2002:7f00:1::]/hook", // 6to4 of 127.0.0.1
  "http://[2002:a9fe:a9fe::1]/hook", // 6to4 of 169.254.169.254
  "http://[2002:c0a8:101:1::1]/hook", // 6to4 of 192.168.1.1
  "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", // Teredo: refused whatever it carries
  "http://[2001::1]/hook",
  "http://[fec0::1]/hook", // site-local (fec0::/10)
  "http://[feff::1]/hook",
  "https://user:secret@hooks.example.com/hook",
  "https://token@hooks.example.com/hook",
];

describe("webhook targets: SSRF", () => {
  it.each(REFUSED)("refuses %s at create, writing nothing", async (target) => {
    const error = await createNotifyChannels(db.current.sql)
      .create(ORG, webhook(target))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidNotification);
    expect((error as InvalidNotification).issues).toEqual([{ path: "target", message: expect.any(String) }]);
    const rows = await db.current.sql`select 1 from notify_channel where organization_id = ${ORG} and target = ${target}`;
    expect(rows).toHaveLength(0);
  });

  it("names the range it refused", async () => {
    await expect(createNotifyChannels(db.current.sql).create(ORG, webhook("http://169.254.169.254/"))).rejects.toThrow(/link-local \(169\.254\/16\)/);
    await expect(createNotifyChannels(db.current.sql).create(ORG, webhook("http://localhost/"))).rejects.toThrow(/resolves to a loopback/);
    // What a translator or relay would connect to is judged; Teredo is refused whatever it carries.
    expect(refusedAddress("::ffff:0:7f00:1")).toBe("IPv4-translated of a loopback (127/8)");
    expect(refusedAddress("2002:a9fe:a9fe::1")).toBe("6to4 of a link-local (169.254/16)");
    expect(refusedAddress("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toBe("Teredo (2001::/32)");
    expect(refusedAddress("fec0::1")).toBe("site-local (fec0::/10)");
    expect(refusedAddress("198.18.0.1")).toBe("benchmarking (198.18/15)");
    expect(refusedAddress("192.0.0.8")).toBe("IETF protocol assignments (192.0.0/24)");
    expect(refusedAddress("64:ff9b::7f00:1")).toBe("NAT64 of a loopback (127/8)");
    expect(refusedAddress("2002:5db8:d70e::1")).toBeNull();
  });

  it("accepts public addresses next to the refused ranges", async () => {
    const channels = createNotifyChannels(db.current.sql);
    for (const target of [
      "https://93.184.215.14/hook",
      "http://172.32.0.1/hook",
      "http://100.128.0.1/hook",
      "http://11.0.0.1/hook",
      "https://[2606:4700::1111]/hook",
      "https://[64:ff9b::5db8:d70e]/hook", // NAT64 of a public address
      "http://192.0.1.1/hook",
      "http://198.17.255.254/hook",
      "http://198.20.0.1/hook",
      "https://[2002:5db8:d70e::1]/hook", // 6to4 of a public address
      "https://[2001:db9::1]/hook", // next to Teredo
    ]) {
      await expect(channels.create(ORG, webhook(target)), target).resolves.toMatchObject({ channel: { target } });
    }
  });

  it("accepts loopback with allowPrivateNetworks (tests, trusted members); credentials stay refused", async () => {
    const channels = createNotifyChannels(db.current.sql, { allowPrivateNetworks: true });
    await expect(channels.create(ORG, webhook("http://127.0.0.1:9/hook"))).resolves.toBeDefined();
    await expect(channels.create(ORG, webhook("http://localhost:9/hook"))).resolves.toBeDefined();
    await expect(channels.create(ORG, webhook("http://u:p@127.0.0.1:9/hook"))).rejects.toBeInstanceOf(InvalidNotification);
  });

  it("refuses at send time a host that resolves to loopback, even though the channel was allowed at create: dead, nothing sent", async () => {
    const hook = await startWebhookReceiver();
    closing(() => hook.close());
    const organizationId = `org_${randomUUID().slice(0, 8)}`;
    const memberId = "member_rebound";
    const byName = hook.url.replace("127.0.0.1", "localhost");
    await createNotifyChannels(db.current.sql, { allowPrivateNetworks: true }).create(organizationId, { ...webhook(byName), memberId });
    await createNotifyChannels(db.current.sql, { allowPrivateNetworks: true }).create(organizationId, { ...webhook(hook.url), memberId });
    const event = { kind: "turn_idle" as const, organizationId, memberId, sessionId: "rs_rebound", title: "t", state: "idle", occurredAt: new Date() };
    await enqueueNotification(db.current.sql, { ...event, id: "evt_rebound" });
    const drain = await startNotificationDrain({ sql: db.current.sql, notifiers: [webhookNotifier()], intervalMs: 20, backoff: () => 0 });
    closing(() => drain.close());
    const errors = () =>
      db.current.sql`select status, attempts, last_error as "lastError" from notify_delivery where event_id = 'evt_rebound' order by last_error`;
    await expect.poll(errors).toEqual([
      { status: "dead", attempts: 1, lastError: "misconfigured: refused to connect: the webhook's host is a loopback (127/8) address" },
      { status: "dead", attempts: 1, lastError: "misconfigured: refused to connect: the webhook's host is a loopback (127/8) address" },
    ]);
    expect(hook.received).toHaveLength(0);
  });

  it("the same notifier with allowPrivateNetworks posts to a name that resolves to loopback", async () => {
    const hook = await startWebhookReceiver();
    closing(() => hook.close());
    const channel = {
      id: "nch_x",
      kind: "webhook" as const,
      target: hook.url.replace("127.0.0.1", "localhost"),
      secret: `whsec_${"A".repeat(43)}=`,
      allowText: false,
    };
    const event = {
      id: "evt_local",
      kind: "turn_idle" as const,
      organizationId: ORG,
      memberId: "m",
      sessionId: "rs",
      title: "t",
      state: "idle",
      occurredAt: new Date(),
    };
    await webhookNotifier({ allowPrivateNetworks: true }).send({ event, channel, attempt: 1 }, AbortSignal.timeout(5_000));
    expect(hook.received).toHaveLength(1);
    const refused = await webhookNotifier()
      .send({ event, channel, attempt: 1 }, AbortSignal.timeout(5_000))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotifyError);
    expect(refused).toMatchObject({ code: "misconfigured", retryable: false });
    expect(hook.received).toHaveLength(1);
  });
});
