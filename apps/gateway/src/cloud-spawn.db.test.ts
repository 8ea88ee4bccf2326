import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// A cloud session's agent starts a session through the MCP entry the cloud target registered in
// its workspace (the session's own credential): a real opencode behind the witness worker.
const db = useTestDatabase();
const member = fixedDevMember("cloud-spawner");
let opencode: RealOpencode;
let witness: RunningWitness;
let test: Awaited<ReturnType<typeof startTestGateway>>;

beforeAll(async () => {
  opencode = await startRealOpencode();
  witness = await startWitnessWorker({
    clientToken: "client-token-spawn",
    hostToken: "host-token-spawn",
    gatewayKey: "gateway-key-spawn",
    opencode: { url: opencode.url, directory: opencode.directory },
  });
  test = await startTestGateway(db.current.url, member, {
    cloudEnabled: () => true,
    cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-spawn" }),
  });
}, 90_000);

afterAll(async () => {
  await test?.close();
  await witness?.close();
  await opencode?.stop();
});

type Payload = Record<string, any>;
const ok = async (name: string, body: Record<string, unknown>): Promise<Payload> => {
  const result = await test.execute(name, body);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
};

it("a cloud session's agent starts a session that is recorded as its own", async () => {
  const body = { target: "cloud", title: "Cloud child", prompt: "hello from the cloud" };
  const root = await ok("remote-session:create", {
    target: "cloud",
    title: "Cloud coordinator",
    prompt: `Delegate.\nCAPABILITY ${JSON.stringify({ name: "remote-session:create", body })}`,
  });
  const deadline = Date.now() + 60_000;
  let read: Payload;
  do {
    read = await ok("remote-session:read", { sessionId: root.sessionId, waitMs: 2_000, from: "end" });
    if (Date.now() > deadline) throw new Error(`the coordinator stayed ${read.state}`);
  } while (!(read.state === "idle" && read.finalAssistantText !== undefined));
  expect(read.finalAssistantText).toMatch(/the tool said/);
  const listed = await ok("remote-session:list", { spawnedBy: root.sessionId });
  expect(listed.sessions).toEqual([expect.objectContaining({ title: "Cloud child", spawnedBy: root.sessionId, depth: 1, target: "cloud" })]);
  const child = await ok("remote-session:read", { sessionId: listed.sessions[0].sessionId });
  expect(child.provenance).toMatch(/^started by session “Cloud coordinator”/);
}, 90_000);
