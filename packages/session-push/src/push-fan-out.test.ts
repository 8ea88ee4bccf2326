import { silentLogger } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import type { PushAuth } from "./push-bus.js";
import { createPushHub } from "./push-hub.js";
import type { PushStore } from "./push-store.js";

// 200 MCP sessions of one member subscribed to one chatty session, on one replica: each change
// of it is read once there, not once per subscriber.
const SUBSCRIBERS = 200;
const SESSION = "rs_0000000000000000000000fan0";

it("reads a watched session once per change on a replica, however many subscribers watch it", async () => {
  const auth: PushAuth = {
    token: "mcp_token_fan_out",
    clientId: "client",
    scopes: ["mcp:read"],
    extra: { organizationId: "org_fan", userId: "u", memberId: "m" },
  };
  let version = 0;
  let reads = 0;
  let wake = () => {};
  let changed = new Promise<void>((resolve) => (wake = resolve));
  const change = () => {
    version++;
    const woken = wake;
    changed = new Promise<void>((resolve) => (wake = resolve));
    woken();
  };
  const announced: string[] = [];
  const store = {
    subscriptions: async () => [{ uri: `remote-session://${SESSION}`, remoteSessionId: SESSION, fingerprint: "" }],
    announce: async (key: { id: string }, _uri: string, fingerprint: string) => void announced.push(`${key.id}:${fingerprint}`),
    eventsAfter: async () => [],
  } as unknown as PushStore;
  const hub = createPushHub({
    store,
    logger: silentLogger,
    read: async () => {
      reads++;
      return { state: "running", cursor: String(version), target: "desktop" };
    },
    bus: {
      waitForSession: (_id, _timeoutMs, signal) =>
        Promise.race([changed, new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }))]),
      subscribePush: () => () => {},
    },
  });
  const streams = Array.from({ length: SUBSCRIBERS }, (_, i) => hub.stream(`mcp_session_${i}`, auth, null));
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  await settle();
  expect(hub.stats().pushWatchers).toBe(SUBSCRIBERS);
  const first = reads;
  for (let i = 0; i < 5; i++) {
    change();
    await settle();
  }
  // One read per change for all 200 watchers (was one per watcher: 200 per change).
  expect(reads - first).toBe(5);
  // And every subscriber was told of the last change.
  expect(announced.filter((a) => a.endsWith(announced.at(-1)!.split(":")[1]!))).toHaveLength(SUBSCRIBERS);
  await Promise.all(streams.map((s) => s.body?.cancel()));
  await hub.close();
});
