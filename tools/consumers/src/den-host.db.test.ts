import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CAPABILITY_WITH_TARGETS, type ConsumerFolder, hostSpec, installConsumer, installedCopies } from "./consumer-folder.js";

// Every published package from its tarball, installed by npm beside the host's own zod and
// postgres (a zod patch other than the one the workspace pins), then a den-api-shaped host in
// that folder: the capability source with the desktop and cloud targets, in a registry double.
const db = useTestDatabase();
const PACKAGES = [...CAPABILITY_WITH_TARGETS, "wake-bus-nats"];
const THIRD_PARTY = [
  "zod",
  "postgres",
  "ky",
  "eventsource-parser",
  "@nats-io/transport-node",
  "@modelcontextprotocol/server",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/ext-apps",
];
let folder: ConsumerFolder;
let witness: RunningWitness;

beforeAll(async () => {
  [folder, witness] = await Promise.all([
    installConsumer(PACKAGES, THIRD_PARTY),
    startWitnessWorker({ clientToken: "client-token-host", hostToken: "host-token-host", gatewayKey: "gateway-key-host" }),
  ]);
  await cp(new URL("../fixtures/den-host/", import.meta.url), join(folder.dir, "host"), { recursive: true });
});
afterAll(async () => {
  await witness?.close();
  await folder?.remove();
});

it("installs one copy of zod, postgres and the core, the host's, beside every package", async () => {
  const copies = async (name: string) => (await installedCopies(folder.dir, name)).map((copy) => copy.slice(folder.dir.length));
  expect(await copies("zod")).toEqual([`/node_modules/${await hostSpec("zod")}`]);
  expect(await copies("postgres")).toEqual(["/node_modules/postgres@3.4.9"]);
  const core = JSON.parse(await readFile(new URL("../../../packages/remote-session-core/package.json", import.meta.url), "utf8")) as { version: string };
  expect(await copies("@openwork/remote-session-core")).toEqual([`/node_modules/@openwork/remote-session-core@${core.version}`]);
});

it("creates, reads and stops a cloud session and a queued desktop session through a den-api-shaped registry, and the cloud one again through the MCP server 2.x and sdk 1.x adapters", async () => {
  const { stdout } = await folder.node([join(folder.dir, "host", "host.mjs")], {
    DATABASE_URL: db.current.url,
    RESOLVER_URL: witness.resolverUrl,
    GATEWAY_KEY: "gateway-key-host",
  });
  const seen = JSON.parse(stdout);
  expect(seen.search).toEqual(expect.arrayContaining(["remote-session:create", "remote-session:read", "remote-session:stop"]));
  expect(seen.cloud.created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: "cloud" });
  expect(seen.cloud.read).toMatchObject({
    sessionId: seen.cloud.created.sessionId,
    state: "idle",
    finalAssistantText: expect.stringContaining("hello from the host"),
  });
  expect(seen.cloud.stopped).toMatchObject({ sessionId: seen.cloud.created.sessionId, stopped: expect.any(Boolean) });
  expect(seen.desktop.offline).toMatchObject({ error: "desktop_offline", referenceId: expect.stringMatching(/^ref_/) });
  expect(seen.desktop.created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: "desktop", state: "queued" });
  expect(seen.desktop.read).toMatchObject({ state: "queued" });
  expect(seen.desktop.stopped).toMatchObject({ sessionId: seen.desktop.created.sessionId, stopped: true });
  expect(seen.desktop.after.state).not.toBe("queued");
  expect(seen.unknown).toMatchObject({ error: "unknown_capability" });
  // The same through both MCP adapters of the tarball.
  expect(Object.keys(seen.mcp)).toEqual(["server-v2", "sdk-v1"]);
  for (const [which, { created, read, stopped }] of Object.entries<Record<string, { sessionId: string }>>(seen.mcp)) {
    expect(created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: "cloud" });
    expect(read).toMatchObject({ sessionId: created!.sessionId, state: "idle", finalAssistantText: expect.stringContaining(`hello over ${which}`) });
    expect(stopped).toMatchObject({ sessionId: created!.sessionId, stopped: expect.any(Boolean) });
  }
});
