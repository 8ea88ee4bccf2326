import { createSessionLedger, defineErrorCodes, migrate, type Target } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import { createDenRegistry } from "./den-registry.testing.js";
import { remoteSessionContext } from "./registry-context.js";
import { createScriptedTarget } from "./scripted-target.testing.js";

// A target neither the core nor this package knows: a kiosk with booths. Everything it adds to
// the results, its error code and its other names, it declares itself.
const KIOSK_ERRORS = defineErrorCodes({ kiosk_asleep: { retryable: true, action: "Wake the kiosk, then try again." } });

function kioskTarget(): Target {
  const scripted = createScriptedTarget("kiosk");
  return {
    ...scripted,
    aliases: ["stall"],
    createArguments: { booth: z.string().min(1).max(40).optional().describe("Kiosk: the booth to run in.") },
    createArgumentAliases: { boothId: "booth" },
    resultFields: {
      create: { booth: "The booth the session went to." },
      read: { queuePosition: "How many sessions run before this one." },
      targets: { booths: "Each booth and whether it is free." },
    },
    errorCodes: KIOSK_ERRORS.codes,
    availability: async () => ({ available: true, machines: [{ boothId: "b1", free: true }], fields: { booths: [{ boothId: "b1", free: true }] } }),
    create: async (call, input) => {
      if (input.extra.booth === "asleep") return KIOSK_ERRORS.fail("kiosk_asleep", "the kiosk is asleep", { retryAfterMs: 2_000 });
      // `undeclared` is not in resultFields: it never reaches the caller.
      return { ...(await scripted.create(call, input)), fields: { booth: input.extra.booth ?? "b1", undeclared: true } };
    },
    read: async (call, session, input) => ({ ...(await scripted.read(call, session, input)), fields: { queuePosition: 2 } }),
  };
}

const db = useTestDatabase();
let source: RemoteSessionSource;
const ctx = remoteSessionContext({ organizationId: "org_k", userId: "user_k", orgMembershipId: "mem_k", scopes: ["mcp:read", "mcp:write"] });
const run = async (name: string, body: unknown) => (await createDenRegistry(source).execute(ctx, { name, body })).structuredContent;

beforeAll(async () => {
  await migrate(db.current.sql);
  source = createRemoteSessionSource({ targets: [createScriptedTarget("cloud"), kioskTarget()], ledger: createSessionLedger(db.current.sql) });
});

describe("a third target declares its own result fields, error codes and names", () => {
  it("passes its create and read fields into the results, beside the core's, and nothing it did not declare", async () => {
    const created = await run("remote-session:create", { target: "kiosk", title: "at the kiosk", boothId: "b7" });
    expect(created).toMatchObject({ target: "kiosk", state: "idle", booth: "b7", targetLabel: "Kiosk" });
    expect(created).not.toHaveProperty("fields");
    expect(created).not.toHaveProperty("undeclared");
    const read = await run("remote-session:read", { sessionId: created.sessionId });
    expect(read).toMatchObject({ sessionId: created.sessionId, queuePosition: 2 });
    expect(read).not.toHaveProperty("fields");
    expect(read).not.toHaveProperty("awaitingTarget");
  });

  it("answers its own error code in the one error shape, with its retryable and human step", async () => {
    expect(await run("remote-session:create", { target: "stall", booth: "asleep" })).toEqual({
      error: "kiosk_asleep",
      message: "the kiosk is asleep",
      retryable: true,
      retryAfterMs: 2_000,
      action: "Wake the kiosk, then try again.",
      referenceId: expect.stringMatching(/^ref_/),
    });
  });

  it("shows its own members in targets and its machines in list", async () => {
    const { targets } = (await run("remote-session:targets", {})) as { targets: Record<string, unknown>[] };
    expect(targets.find((t) => t.name === "kiosk")).toEqual({
      name: "kiosk",
      label: "Kiosk",
      available: true,
      default: false,
      booths: [{ boothId: "b1", free: true }],
    });
    expect(targets.find((t) => t.name === "cloud")).toEqual({ name: "cloud", label: "Cloud", available: true, default: true });
    expect((await run("remote-session:list", {})).machines).toEqual([{ target: "kiosk", boothId: "b1", free: true }]);
  });

  it("refuses an argument and its other name with two values, and the argument for another target", async () => {
    expect(await run("remote-session:create", { target: "kiosk", booth: "b1", boothId: "b2" })).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [{ path: "boothId", message: "booth and boothId name the same kiosk: give one, or the same value" }],
    });
    expect(await run("remote-session:create", { target: "cloud", boothId: "b2" })).toMatchObject({
      error: "invalid_capability_arguments",
      issues: [{ path: "boothId" }],
    });
  });

  it("refuses, when the source is built, a result field named like a member of the result", () => {
    const clashing: Target = { ...kioskTarget(), resultFields: { read: { cursor: "a cursor of its own" } } };
    expect(() => createRemoteSessionSource({ targets: [clashing], ledger: createSessionLedger(db.current.sql) })).toThrow(/read result fields cursor/);
  });
});
