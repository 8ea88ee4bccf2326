import { cp } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type RunningWitness, startWitnessWorker } from "@openwork/witness-worker";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CAPABILITY_WITH_TARGETS, type ConsumerFolder, installConsumer } from "./consumer-folder.js";

// The den-api guide's integration, as den-api would adopt it: the tarballs installed by npm beside
// Hono and the host's own zod and postgres; the host compiled by TypeScript against the published
// declarations and den-api's registry as den-api declares it; then run against a worker double.
const db = useTestDatabase();
const PACKAGES = [...CAPABILITY_WITH_TARGETS, "session-push", "session-notify", "remote-session-host"];
const THIRD_PARTY = ["zod", "postgres", "ky", "eventsource-parser", "hono", "@modelcontextprotocol/server", "@types/node"];
const FIXTURE = new URL("../fixtures/den-api/", import.meta.url);
let folder: ConsumerFolder;
let witness: RunningWitness;
let host: string;

beforeAll(async () => {
  [folder, witness] = await Promise.all([
    installConsumer(PACKAGES, THIRD_PARTY),
    startWitnessWorker({ clientToken: "client-token-den", hostToken: "host-token-den", gatewayKey: "gateway-key-den" }),
  ]);
  host = join(folder.dir, "den-api");
  await cp(FIXTURE, host, { recursive: true });
});
afterAll(async () => {
  await witness?.close();
  await folder?.remove();
});

it("compiles against the published declarations and den-api's own registry types (strict)", async () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = await folder.node([tsc, "-p", join(host, "tsconfig.json")]).catch((error: { stdout: string }) => error);
  expect(result.stdout).toBe("");
});

it("creates, reads and stops a cloud and a desktop session through den-api's capability table, its audit store refusing while down, its tables in their own schema, and one desktop loop runs a turn and an Automation", async () => {
  const { stdout } = await folder.node([join(host, "dist", "main.js")], {
    DATABASE_URL: db.current.url,
    RESOLVER_URL: witness.resolverUrl,
    GATEWAY_KEY: "gateway-key-den",
  });
  const seen = JSON.parse(stdout);
  expect(seen.search).toEqual(expect.arrayContaining(["remote-session:create", "remote-session:read", "skill:remote-sessions"]));
  expect(seen.skillSearch).toEqual(expect.arrayContaining(["skill:add-to-marketplace", "skill:create-skill"]));
  expect(seen.cloud.created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: "cloud" });
  expect(seen.cloud.read).toMatchObject({ state: "idle", finalAssistantText: expect.stringContaining("hello from den") });
  expect(seen.cloud.stopped).toMatchObject({ sessionId: seen.cloud.created.sessionId, stopped: expect.any(Boolean) });
  expect(seen.desktop.created).toMatchObject({
    sessionId: expect.stringMatching(/^rs_/),
    commandId: expect.stringMatching(/^rst_/),
    target: "desktop",
    state: "queued",
  });
  // OpenWork's receipt: a read by the create's commandId finds the same session.
  expect(seen.desktop.read).toMatchObject({ sessionId: seen.desktop.created.sessionId, state: "queued" });
  expect(seen.desktop.stopped).toMatchObject({ stopped: true });
  // den-api's own skills answer beside ours: both come from its one BUILTIN_SKILLS table.
  expect(seen.skill).toMatchObject({ kind: "skill", content: expect.stringContaining("name: remote-sessions") });
  expect(seen.denSkill).toMatchObject({ kind: "skill", name: "Create Skill", content: expect.stringContaining("name: create-skill") });
  expect(seen.unknown).toMatchObject({ error: "unknown_capability" });
  expect([seen.runnerWithoutToken, seen.mintWithoutSession]).toEqual([401, 401]);
  // The audit store down: create, send and stop are refused before anything runs; reads still answer.
  expect(seen.auditDown).toMatchObject({ create: "audit_unavailable", send: "audit_unavailable", stop: "audit_unavailable", read: "queued" });
  expect(seen.auditDown.sessionsAfter).toBe(seen.auditDown.sessionsBefore);
  // Up: an intent before each audited call and its outcome after, nothing for the refused ones.
  expect([...seen.audit].sort()).toEqual([
    "remote_session.create.ok",
    "remote_session.create.ok",
    "remote_session.create.ok",
    "remote_session.create.requested",
    "remote_session.create.requested",
    "remote_session.create.requested",
    "remote_session.stop.ok",
    "remote_session.stop.ok",
    "remote_session.stop.requested",
    "remote_session.stop.requested",
  ]);
  expect(seen.schema).toBe("openwork_remote_sessions");
  // One runner loop, one token: den-api's Automation run and a desktop turn, each in its own table and words.
  expect(seen.oneLoop.ended).toEqual(["automation.run:done", "remote_session.create:done"]);
  expect(seen.oneLoop.turn).toMatchObject({ state: "idle", finalAssistantText: "den desktop did: one loop" });
  expect(seen.oneLoop.run).toEqual([{ id: seen.oneLoop.runId, status: "succeeded", attempt_count: 1, result_summary: "den desktop ran Morning digest" }]);
});
