import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import { createDenRegistry } from "./den-registry.testing.js";
import { parseName } from "./parse-name.js";
import { type SearchContext, remoteSessionContext } from "./registry-context.js";
import type { ToolResult } from "./to-tool-result.js";

const db = useTestDatabase();
let source: RemoteSessionSource;
const lines: string[] = [];
// den-api's context as its registry builds it: scopes are a Set, the member a membership or null.
const ctx: SearchContext = remoteSessionContext({ organizationId: "org_1", userId: "user_1", orgMembershipId: "mem_1", scopes: ["mcp:read", "mcp:write"] });
const readOnly: SearchContext = { ...ctx, principal: { userId: "user_1", scopes: new Set(["mcp:read"]) } };

beforeAll(async () => {
  await migrate(db.current.sql);
  // No target at all: what is left to test is the source's own rules.
  source = createRemoteSessionSource({
    targets: [],
    ledger: createSessionLedger(db.current.sql),
    logger: { info: (m, f) => void lines.push(`${m} ${JSON.stringify(f)}`), warn() {}, error: (m, f) => void lines.push(`${m} ${JSON.stringify(f)}`) },
  });
});

/** den-api's rendering: one text part that is the compact JSON of structuredContent; isError only on errors. */
function payloadOf(result: ToolResult): Record<string, unknown> {
  expect(result.content).toHaveLength(1);
  expect(result.content[0]!.text).toBe(JSON.stringify(result.structuredContent));
  expect(result.isError === true || !("isError" in result)).toBe(true);
  return result.structuredContent;
}
const run = async (name: string, body: unknown, context = ctx) => payloadOf(await createDenRegistry(source).execute(context, { name, body }));

describe("the source's log", () => {
  it("writes one line a minute for a member's loop of refused waiting reads, not one per request", async () => {
    const logged: Record<string, unknown>[] = [];
    const gated = createRemoteSessionSource({
      targets: [],
      ledger: createSessionLedger(db.current.sql),
      // No waiting read may wait: every one is refused at its gate.
      waitingReadsPerMember: 0,
      logger: { info: (_m, f) => void logged.push(f ?? {}), warn() {}, error() {} },
    });
    const registry = createDenRegistry(gated);
    for (let i = 0; i < 200; i++) {
      const refused = payloadOf(await registry.execute(ctx, { name: "remote-session:read", body: { sessionId: `rs_${"a".repeat(26)}`, waitMs: 5_000 } }));
      expect(refused).toMatchObject({ error: "rate_limited" });
    }
    expect(logged.filter((f) => f.outcome === "rate_limited")).toHaveLength(1);
    // Other outcomes are logged as ever, one line a call.
    payloadOf(await registry.execute(ctx, { name: "remote-session:read", body: { sessionId: `rs_${"a".repeat(26)}` } }));
    expect(logged.filter((f) => f.outcome === "unknown_session")).toHaveLength(1);
  });
});

describe("the remote-session source in den-api's registry", () => {
  it("claims colon names (and the proposal's spelling) in den-api's parsed shape, and nothing else", () => {
    expect(parseName("remote-session:stop")).toEqual({ kind: "remoteSession", name: "remote-session:stop", action: "stop" });
    expect(parseName("remoteSession.read")).toEqual({ kind: "remoteSession", name: "remoteSession.read", action: "read" });
    for (const name of ["remoteSession.delete", "remoteSession", "remote-session.read", "RemoteSession.read", "remote-session:"])
      expect(parseName(name)).toBeNull();
  });

  it("is reached through the registry under the names search returns; colon-less names go to the catalog", async () => {
    const registry = createDenRegistry(source);
    const matches = await registry.search(ctx, "remote session", 20);
    const names = matches.map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "remote-session:create",
        "remote-session:list",
        "remote-session:read",
        "remote-session:send",
        "remote-session:stop",
        "remote-session:targets",
      ]),
    );
    for (const name of names) expect((await registry.execute(ctx, { name, body: {} })).structuredContent.error).not.toBe("unknown_capability");
    // The proposal's spelling has no colon: den-api's catalog swallows it.
    expect((await registry.execute(ctx, { name: "remoteSession.list", body: {} })).structuredContent).toMatchObject({ error: "unknown_capability" });
    expect(await run("remote-session:list", {})).toEqual({ sessions: [], machines: [] });
  });

  it("gives den-api's match shape, stays out of Code Mode, and searches only for api, members and enabled orgs", async () => {
    const [match] = await source.search(ctx, "stop", 3);
    expect(match).toMatchObject({
      name: "remote-session:stop",
      path: "remote-session:stop",
      method: "SESSION",
      kind: "remote_session",
      pathParams: [],
      queryParams: [],
      hasBody: true,
      invocation: { argumentsField: "body" },
      argumentsSchema: { type: "object" },
    });
    await expect(source.enumerate(ctx)).resolves.toEqual([]);
    expect(await source.search({ ...ctx, sourceFilter: { ...ctx.sourceFilter, api: false } }, "stop", 3)).toEqual([]);
    expect(await source.search({ ...ctx, member: null }, "stop", 3)).toEqual([]);
    expect(await source.search({ ...ctx, remoteSessionsEnabled: false }, "stop", 3)).toEqual([]);
    expect(await source.search(ctx, "", 3)).toEqual([]);
    expect((await source.search(ctx, "remote session", 0)).length).toBe(5);
  });

  it("never rejects a search, even when a target fails", async () => {
    const failing = createRemoteSessionSource({
      targets: [{ name: "cloud", availability: () => Promise.reject(new Error("resolver down")) } as never],
      ledger: createSessionLedger(db.current.sql),
    });
    await expect(failing.search(ctx, "create", 5)).resolves.toEqual([]);
  });

  it("refuses non-members, disabled orgs and mutations without mcp:write; a host may add a gate scope", async () => {
    expect(await run("remote-session:list", {}, { ...ctx, member: null })).toMatchObject({ error: "membership_required", retryable: false });
    // Switched off, an organization keeps reading, listing and stopping what it has; new work is gone.
    expect(await run("remote-session:create", {}, { ...ctx, remoteSessionsEnabled: false })).toMatchObject({ error: "unknown_capability" });
    expect(await run("remote-session:stop", { sessionId: "x" }, readOnly)).toMatchObject({ error: "insufficient_mcp_scope", retryable: false });
    expect(await run("remote-session:create", {}, readOnly)).toMatchObject({ error: "insufficient_mcp_scope" });
    expect(await run("remote-session:respond", { sessionId: "x", requestId: "per_1", answer: { permission: "once" } }, readOnly)).toMatchObject({
      error: "insufficient_mcp_scope",
    });
    // Reads need no extra scope: den-api has none.
    expect(await run("remote-session:list", {}, readOnly)).toEqual({ sessions: [], machines: [] });
    const gated = createRemoteSessionSource({ targets: [], ledger: createSessionLedger(db.current.sql), policy: { gateScope: "remote-session" } });
    expect(await gated.search(ctx, "stop", 3)).toEqual([]);
    expect(payloadOf(await gated.execute(ctx, parseName("remote-session:list")!, { body: {} }))).toMatchObject({ error: "insufficient_mcp_scope" });
  });

  it("reads the body as den-api does and lists argument problems as issues with dotted paths", async () => {
    // A member the capability does not know is set aside and named, as OpenWork's source ignores it.
    expect(await run("remote-session:read", { sessionId: "rs_1", limit: 500, extra: true })).toMatchObject({
      error: "invalid_capability_arguments",
      retryable: false,
      issues: [expect.objectContaining({ path: "limit" })],
      ignored: ["extra"],
    });
    expect(await run("remote-session:create", { model: { providerId: "", modelId: "m" } })).toMatchObject({
      issues: [expect.objectContaining({ path: "model.providerId" })],
    });
    expect(await run("remote-session:create", { prompt: "a", instructions: "b" })).toMatchObject({ error: "invalid_capability_arguments" });

    expect(await run("remote-session:read", { sessionId: "rs_1", cursor: "c", from: "end" })).toMatchObject({ error: "invalid_capability_arguments" });
    // A JSON string body is parsed; a string that is not JSON fails validation; null is {}.
    expect(await run("remote-session:read", ' {"sessionId":"rs_01m8nonexistent000000000000"}')).toMatchObject({ error: "unknown_session" });
    expect(await run("remote-session:read", "{not json")).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await run("remote-session:read", "sessionId=rs_1")).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await run("remote-session:list", null)).toEqual({ sessions: [], machines: [] });
    expect(await run("remote-session:targets", { includeModels: true })).toEqual({ targets: [], computers: [], cloud: { available: false } });
    // No target handed in: none is offered, whatever its name.
    expect(await run("remote-session:create", { target: "cloud", prompt: "secret-prompt-text" })).toMatchObject({ error: "invalid_capability_arguments" });
    expect(await run("remote-session:create", { prompt: "secret-prompt-text" })).toMatchObject({ error: "invalid_capability_arguments" });
  });

  it("answers errors as den-api's payload with a reference id, and logs no prompt text", async () => {
    const failed = await run("remote-session:read", { sessionId: "nope" });
    expect(Object.keys(failed)).toEqual(["error", "message", "retryable", "referenceId"]);
    expect(failed).toMatchObject({ error: "unknown_session", retryable: false, referenceId: expect.stringMatching(/^ref_[0-9a-f]{12}$/) });
    expect(lines.join("\n")).not.toContain("secret-prompt-text");
    expect(lines.some((line) => line.includes('"promptChars":18'))).toBe(true);
  });
});
