import { silentLogger } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import type { PushAuth, PushBus, PushHint } from "./push-bus.js";
import { createPushHub } from "./push-hub.js";
import type { PushEvent, PushStore, Subscription } from "./push-store.js";

// The push hub hears other replicas only through the bus's push hints and resyncs: each kind of
// hint does its one thing, and a resync makes every stream and watcher look again.
const auth: PushAuth = { token: "mcp_token_hub", clientId: "client", scopes: ["mcp:read"], extra: { organizationId: "org_hub", userId: "u", memberId: "m" } };
const SESSION = "rs_00000000000000000000000hub";

function fixture() {
  let handlers: Parameters<PushBus["subscribePush"]>[0] | undefined;
  const events: PushEvent[] = [];
  const subscriptions: Subscription[] = [];
  const store = {
    subscriptions: async () => [...subscriptions],
    announce: async () => true,
    eventsAfter: async (_key: unknown, after: string | null) => events.filter((e) => BigInt(e.id) > BigInt(after ?? "0")),
  } as unknown as PushStore;
  const hub = createPushHub({
    store,
    logger: silentLogger,
    // A backstop that never comes within the test: only hints and resyncs move a stream.
    backstopMs: 3_600_000,
    read: async () => ({ state: "running", cursor: "1", target: "desktop" }),
    bus: {
      waitForSession: (_id, _ms, signal) => new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true })),
      subscribePush: (given) => {
        handlers = given;
        return () => (handlers = undefined);
      },
    },
  });
  return { hub, events, subscriptions, bus: () => handlers! };
}

/** Everything the stream has written so far (it stays open). */
async function written(reader: ReadableStreamDefaultReader<Uint8Array>, until: (text: string) => boolean): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  while (!until(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

it("sends a stream's new events on an events hint and on a resync, starts watchers on a subs hint, and closes on gone", async () => {
  const { hub, events, subscriptions, bus } = fixture();
  let ended = 0;
  const reader = hub.stream("mcps_hub", auth, null, () => void ended++).body!.getReader();
  expect(await written(reader, (t) => t.includes("stream open"))).toContain(": stream open");

  const message = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: `remote-session://${SESSION}` } };
  events.push({ id: "1", message });
  const hint = (m: string, k: PushHint["k"]): PushHint => ({ o: "", m, k });
  // A hint for another MCP session moves nothing here.
  bus().push([hint("mcps_other", "events")]);
  bus().push([hint("mcps_hub", "events")]);
  expect(await written(reader, (t) => t.includes("id: 1"))).toContain(`id: 1\nevent: message\ndata: ${JSON.stringify(message)}`);

  // The bus reconnected: the hint of event 2 was lost; the resync finds it.
  events.push({ id: "2", message });
  bus().resync();
  expect(await written(reader, (t) => t.includes("id: 2"))).toContain("id: 2\n");

  expect(hub.stats().pushWatchers).toBe(0);
  subscriptions.push({ uri: `remote-session://${SESSION}`, remoteSessionId: SESSION, fingerprint: "" });
  bus().push([hint("mcps_hub", "subs")]);
  await settle();
  expect(hub.stats().pushWatchers).toBe(1);

  bus().push([hint("mcps_hub", "gone")]);
  expect((await reader.read()).done).toBe(true);
  expect(ended).toBe(1);
  expect(hub.stats()).toEqual({ pushStreams: 0, pushWatchers: 0 });
  await hub.close();
});
