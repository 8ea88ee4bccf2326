import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import { parseName } from "./parse-name.js";
import { remoteSessionContext, type SearchContext } from "./registry-context.js";
import { createScriptedTarget, type ScriptedTarget } from "./scripted-target.testing.js";

const db = useTestDatabase();
const ctx: SearchContext = remoteSessionContext({ organizationId: "org_ow", userId: "user_ow", orgMembershipId: "mem_ow", scopes: ["mcp:read", "mcp:write"] });
const disabled: SearchContext = { ...ctx, remoteSessionsEnabled: false };
let cloud: ScriptedTarget;
let desktop: ScriptedTarget;
let source: RemoteSessionSource;

beforeAll(async () => {
  await migrate(db.current.sql);
  cloud = createScriptedTarget("cloud");
  // OpenWork's `registered` is another name of the desktop target, which it declares.
  desktop = createScriptedTarget("desktop", { sendTakesModel: true, aliases: ["registered"] });
  source = createRemoteSessionSource({ targets: [cloud, desktop], ledger: createSessionLedger(db.current.sql) });
});

const run = async (name: string, body: unknown, context = ctx) => {
  const result = await source.execute(context, parseName(name)!, { body });
  expect(result.content[0]!.text).toBe(JSON.stringify(result.structuredContent));
  return result.structuredContent;
};
const started = async (target = "cloud", prompt = "first") => String((await run("remote-session:create", { target, prompt })).sessionId);

describe("calls shaped as OpenWork's source takes them", () => {
  it("sets aside members with no use here and names them, so an OpenWork-trained agent works and a typo is seen", async () => {
    const sessionId = await started();
    const sent = await run("remote-session:send", { sessionId, prompt: "more", workspaceId: "ws_1", model: { providerId: "openai", modelId: "gpt-5" } });
    expect(sent).toMatchObject({ state: "accepted", ignored: ["workspaceId", "model"] });
    // The cloud target here runs no per-turn model: none was passed on.
    expect(cloud.sends.at(-1)).not.toHaveProperty("model");
    const read = await run("remote-session:read", { sessionId, workspaceId: "ws_1", waitMS: 5 });
    expect(read).toMatchObject({ sessionId, ignored: ["workspaceId", "waitMS"] });
    // As OpenWork's read: exactly one of sessionId, commandId and requestId.
    expect(await run("remote-session:read", { sessionId, commandId: "rst_1" })).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [{ path: "sessionId", message: "exactly one of sessionId, commandId or requestId is required" }],
    });
    // Errors name them too.
    expect(await run("remote-session:read", { sessionId: "rs_missing", sesionId: "x" })).toMatchObject({ error: "unknown_session", ignored: ["sesionId"] });
    // A call without strays carries no `ignored`.
    expect(await run("remote-session:read", { sessionId })).not.toHaveProperty("ignored");
  });

  it("runs a follow-up with its model where the target takes one", async () => {
    const sessionId = await started("desktop");
    const model = { providerId: "anthropic", modelId: "claude" };
    expect(await run("remote-session:send", { sessionId, prompt: "more", model })).not.toHaveProperty("ignored");
    expect(desktop.sends.at(-1)).toMatchObject({ prompt: "more", model });
  });

  it("maps create's target registered to the desktop, and lists it", async () => {
    const created = await run("remote-session:create", { target: "registered", prompt: "on my machine" });
    expect(created).toMatchObject({ target: "desktop" });
    const listed = await run("remote-session:list", { target: "registered" });
    expect((listed.sessions as { sessionId: string; target: string }[]).map((s) => s.target)).toContain("desktop");
  });

  it("reads the turn a messageId started: that prompt and its replies, no other turn", async () => {
    const sessionId = await started();
    cloud.reply(sessionId, "first answer");
    const sent = await run("remote-session:send", { sessionId, prompt: "second" });
    cloud.reply(sessionId, "second answer");
    await run("remote-session:send", { sessionId, prompt: "third" });
    const turn = await run("remote-session:read", { sessionId, messageId: sent.messageId });
    expect((turn.messages as { text: string }[]).map((m) => m.text)).toEqual(["second", "second answer"]);
    expect(turn).not.toHaveProperty("finalAssistantText");
    expect(await run("remote-session:read", { sessionId, messageId: "msg_unknown" })).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [expect.objectContaining({ path: "messageId" })],
    });
  });

  it("stops only the turn a messageId names: another turn answers different_turn and keeps running", async () => {
    const sessionId = await started();
    cloud.reply(sessionId, "done");
    const older = await run("remote-session:send", { sessionId, prompt: "older" });
    cloud.reply(sessionId, "done too");
    const current = await run("remote-session:send", { sessionId, prompt: "current" });
    const refused = await run("remote-session:stop", { sessionId, messageId: older.messageId });
    expect(refused).toMatchObject({ stopped: false, reason: "different_turn", currentMessageId: current.messageId, state: "running" });
    expect(cloud.sessions.get(sessionId)!.state).toBe("running");
    expect(await run("remote-session:stop", { sessionId, messageId: current.messageId })).toMatchObject({ stopped: true, state: "stopped" });
  });
});

describe("an organization whose remote sessions were switched off", () => {
  it("still reads, lists and stops the sessions it has; create, send, respond and targets are gone", async () => {
    const sessionId = await started();
    expect(await run("remote-session:read", { sessionId }, disabled)).toMatchObject({ sessionId, state: "running" });
    expect(((await run("remote-session:list", {}, disabled)).sessions as { sessionId: string }[]).map((s) => s.sessionId)).toContain(sessionId);
    expect(await run("remote-session:stop", { sessionId }, disabled)).toMatchObject({ stopped: true, state: "stopped" });
    for (const [name, body] of [
      ["remote-session:create", { prompt: "new" }],
      ["remote-session:send", { sessionId, prompt: "again" }],
      ["remote-session:respond", { sessionId, requestId: "per_1", answer: { permission: "once" } }],
      ["remote-session:targets", {}],
    ] as const) {
      expect(await run(name, body, disabled)).toMatchObject({ error: "unknown_capability" });
    }
    expect(await source.search(disabled, "stop", 5)).toEqual([]);
  });
});
