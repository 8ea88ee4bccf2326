import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import type { CapabilityContext } from "./capability-context.js";
import { parseName } from "./parse-name.js";

const db = useTestDatabase();
let source: RemoteSessionSource;
const lines: string[] = [];
const ctx: CapabilityContext = { organizationId: "org_1", memberId: "mem_1", scopes: ["remote-session", "mcp:write"] };

beforeAll(async () => {
  await migrate(db.current.sql);
  // No target at all: what is left to test is the source's own rules.
  source = createRemoteSessionSource({
    targets: [],
    ledger: createSessionLedger(db.current.sql),
    logger: { info: (m, f) => void lines.push(`${m} ${JSON.stringify(f)}`), warn() {}, error() {} },
  });
});

const errorOf = async (action: Parameters<RemoteSessionSource["execute"]>[1]["action"], body: unknown, context = ctx) =>
  (await source.execute(context, { action }, { body })).structuredContent;

describe("the remote-session source", () => {
  it("parses both spellings of a name and nothing else", () => {
    expect(parseName("remoteSession.read")).toEqual({ action: "read" });
    expect(parseName("remote-session:stop")).toEqual({ action: "stop" });
    for (const name of ["remoteSession.delete", "remoteSession", "remote-session.read", "RemoteSession.read"]) expect(parseName(name)).toBeNull();
  });

  it("ranks by the query and stays out of Code Mode", async () => {
    const matches = await source.search(ctx, "stop", 3);
    expect(matches[0]).toMatchObject({ name: "remoteSession.stop", kind: "remote_session", invocation: { argumentsField: "body" }, readOnly: false });
    expect(source.enumerate(ctx)).toEqual({ excluded: true });
    expect(await source.search({ ...ctx, scopes: ["mcp:write"] }, "stop", 3)).toEqual([]);
  });

  it("lists argument problems, reads a JSON string body, and refuses without the scopes or a membership", async () => {
    expect(await errorOf("read", { sessionId: "rs_1", limit: 500, extra: true })).toMatchObject({
      error: "invalid_capability_arguments",
      details: { issues: expect.arrayContaining([expect.objectContaining({ path: "limit" }), expect.objectContaining({ path: "" })]) },
    });
    expect(await errorOf("create", { prompt: "a", instructions: "b" })).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await errorOf("create", { target: "cloud", runner: "mac" })).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await errorOf("read", '{"sessionId":"rs_01m8nonexistent000000000000"}')).toMatchObject({ error: "unknown_session" });
    expect(await errorOf("read", "{not json")).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await errorOf("stop", { sessionId: "x" }, { ...ctx, scopes: ["remote-session"] })).toMatchObject({ error: "insufficient_scope" });
    expect(await errorOf("list", {}, { ...ctx, scopes: [] })).toMatchObject({ error: "insufficient_scope" });
    expect(await errorOf("list", {}, { ...ctx, memberId: null })).toMatchObject({ error: "membership_required" });
    expect(await errorOf("create", { target: "cloud", prompt: "secret-prompt-text" })).toMatchObject({ error: "cloud_not_available" });
  });

  it("answers with readable text, structured content and a reference id, and logs no prompt text", async () => {
    const result = await source.execute(ctx, { action: "list" }, { body: {} });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ sessions: [], desktops: [] });
    expect(result.content[0]!.text).toContain("No sessions yet.");
    const failed = await source.execute(ctx, { action: "read" }, { body: { sessionId: "nope" } });
    expect(failed.isError).toBe(true);
    expect(failed.content[0]!.text).toMatch(/unknown_session: .*\nReference: ref_[0-9a-f]{12}/);
    expect(lines.join("\n")).not.toContain("secret-prompt-text");
    expect(lines.some((line) => line.includes('"promptChars":18'))).toBe(true);
  });
});
