import { createHttpWorkerResolver } from "@openwork/cloud-target";
import { type RealOpencode, startRealOpencode } from "@openwork/real-opencode";
import { useTestDatabase } from "@openwork/test-postgres";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedDevMember } from "./dev-members.js";
import { startTestGateway } from "./testing/test-gateway.js";

// A cloud session's agent starts a session through its own MCP entry in its workspace (the
// session's own credential), on a real opencode behind the witness worker and on the witness's
// echo engine (what `npm start` runs): the child's entry must neither cut the parent's call nor
// take its place.
const db = useTestDatabase();
let test: Awaited<ReturnType<typeof startTestGateway>>;

/** A gateway whose cloud target is a witness worker over `opencode` (a real one), or over the echo engine. */
function withWorker(name: string, real: boolean) {
  let opencode: RealOpencode | undefined;
  let witness: RunningWitness;
  beforeAll(async () => {
    opencode = real ? await startRealOpencode() : undefined;
    witness = await startWitnessWorker({
      clientToken: "client-token-spawn",
      hostToken: "host-token-spawn",
      gatewayKey: "gateway-key-spawn",
      ...(opencode ? { opencode: { url: opencode.url, directory: opencode.directory } } : { echo: { replyDelayMs: 20 } }),
    });
    test = await startTestGateway(db.current.url, fixedDevMember(name), {
      cloudEnabled: () => true,
      cloudResolver: createHttpWorkerResolver({ baseUrl: witness.resolverUrl, gatewayKey: "gateway-key-spawn" }),
    });
  }, 90_000);
  afterAll(async () => {
    await test?.close();
    await witness?.close();
    await opencode?.stop();
  });
}

type Payload = Record<string, any>;
const ok = async (name: string, body: Record<string, unknown>): Promise<Payload> => {
  const result = await test.execute(name, body);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
};

/** A cloud session's agent asked to start a session titled `title`, through the gateway's `execute_capability`. */
const spawning = (title: string) => {
  const body = { target: "cloud", title, prompt: "hello from the cloud" };
  return `Delegate.\nCAPABILITY ${JSON.stringify({ name: "remote-session:create", body })}`;
};

/** Reads a session until its turn has ended with a reply. */
async function replyOf(sessionId: string): Promise<Payload> {
  const deadline = Date.now() + 60_000;
  let read: Payload;
  do {
    read = await ok("remote-session:read", { sessionId, waitMs: 2_000, from: "end" });
    if (Date.now() > deadline) throw new Error(`the coordinator stayed ${read.state}`);
  } while (!(read.state === "idle" && read.finalAssistantText !== undefined));
  return read;
}

/** The one session `parent` started: the parent's call answered with it (not cut), and it is recorded as the parent's. */
async function expectSpawned(parent: Payload, title: string): Promise<Payload> {
  const read = await replyOf(parent.sessionId);
  const listed = await ok("remote-session:list", { spawnedBy: parent.sessionId });
  expect(listed.sessions).toEqual([expect.objectContaining({ title, spawnedBy: parent.sessionId, depth: 1, target: "cloud" })]);
  // The tool's result, not an error: the child's own entry did not cut the parent's call.
  expect(read.finalAssistantText).toContain(`the tool said`);
  expect(read.finalAssistantText).toContain(listed.sessions[0].sessionId);
  expect(read.finalAssistantText).not.toContain("MCP error");
  return listed.sessions[0];
}

/** The spawning tests, on the engine `withWorker` started. */
const spawningTests = () => {
  it("a cloud session's agent starts a session that is recorded as its own, and its call answers", async () => {
    const root = await ok("remote-session:create", { target: "cloud", title: "Cloud coordinator", prompt: spawning("Cloud child") });
    const spawned = await expectSpawned(root, "Cloud child");
    const child = await ok("remote-session:read", { sessionId: spawned.sessionId });
    expect(child.provenance).toMatch(/^started by session “Cloud coordinator”/);
    // Its next call still acts as itself, not as the child it started.
    await ok("remote-session:send", { sessionId: root.sessionId, prompt: spawning("Second child") });
    await replyOf(root.sessionId);
    const listed = await ok("remote-session:list", { spawnedBy: root.sessionId });
    expect(listed.sessions.map((s: Payload) => s.title).sort()).toEqual(["Cloud child", "Second child"]);
  }, 120_000);

  it("two sessions of one workspace spawning at once each start their own, and neither call is cut", async () => {
    const [a, b] = await Promise.all(
      ["A", "B"].map((name) => ok("remote-session:create", { target: "cloud", title: `Coordinator ${name}`, prompt: spawning(`Child of ${name}`) })),
    );
    await Promise.all([expectSpawned(a!, "Child of A"), expectSpawned(b!, "Child of B")]);
  }, 120_000);
};

describe("on a real opencode", () => {
  withWorker("cloud-spawner", true);
  spawningTests();
});

describe("on the echo engine of npm start", () => {
  withWorker("cloud-spawner-echo", false);
  spawningTests();
});
