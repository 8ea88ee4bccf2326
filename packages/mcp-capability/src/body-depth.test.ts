import { silentLogger } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import { MAX_BODY_DEPTH, pathTooDeep } from "./body-depth.js";
import { createRemoteSessionSource } from "./create-remote-session-source.js";
import { parseName } from "./parse-name.js";
import { remoteSessionContext } from "./registry-context.js";

const nested = (depth: number): unknown => {
  let value: unknown = "x";
  for (let i = 0; i < depth; i++) value = { sessionId: value };
  return value;
};

it("refuses a body nested 10 000 deep as invalid_capability_arguments naming the depth, as an object and as a JSON string", async () => {
  const logged: string[] = [];
  const logger = { ...silentLogger, error: (message: string) => void logged.push(message) };
  // No ledger or target is reached: the body is refused before any of them.
  const source = createRemoteSessionSource({ targets: [], ledger: {} as never, logger });
  const ctx = remoteSessionContext({ organizationId: "org_deep", userId: "user_deep", orgMembershipId: "mem_deep", scopes: ["mcp:read", "mcp:write"] });
  // JSON.stringify itself cannot write this deep: the string form is built by hand.
  const text = `${'{"sessionId":'.repeat(10_000)}"x"${"}".repeat(10_000)}`;
  for (const body of [nested(10_000), text]) {
    const result = await source.execute(ctx, parseName("remote-session:read")!, { body });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: "invalid_capability_arguments", retryable: false });
    expect(String(result.structuredContent.message)).toContain(`deeper than ${MAX_BODY_DEPTH} levels`);
    const [issue] = result.structuredContent.issues as { path: string; message: string }[];
    expect(issue!.message).toBe(`nests deeper than ${MAX_BODY_DEPTH} levels`);
    // Where it went too deep, cut to a path's length.
    expect(issue!.path).toMatch(/^sessionId(\.sessionId)+/);
    expect(issue!.path.length).toBeLessThanOrEqual(200);
  }
  expect(logged).toEqual([]);
});

it("finds the first container past the limit, and none in a body at the limit", () => {
  expect(pathTooDeep(nested(MAX_BODY_DEPTH))).toBeNull();
  expect(pathTooDeep({ a: [1, { b: [[]] }] }, 4)).toBeNull();
  expect(pathTooDeep({ a: [1, { b: [[]] }] }, 3)).toBe("a.1.b.0");
  expect(pathTooDeep("text")).toBeNull();
});
