import { createHash } from "node:crypto";
import { parseName } from "@openwork/mcp-capability";
import { ACTIONS, capabilityName } from "@openwork/mcp-capability/internal";
import { SESSION_ERROR_CODES } from "@openwork/remote-session-core/internal";
import { useTestDatabase } from "@openwork/test-postgres";
import fc from "fast-check";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DevMember, fixedDevMember, memberContext } from "./dev-members.js";
import { serveGateway } from "./serve-gateway.js";

const db = useTestDatabase();
const member: DevMember = fixedDevMember("fuzz");
let gateway: Awaited<ReturnType<typeof serveGateway>>;
let sql: postgres.Sql;

beforeAll(async () => {
  sql = postgres(db.current.url, { max: 10, onnotice: () => {} });
  gateway = await serveGateway({ sql, port: 0, members: () => [member], cloudEnabled: () => true, runnerTokenSecret: "fuzz-runner-secret-0123456789abcdef" });
});
afterAll(async () => {
  await gateway?.close();
  await sql?.end({ timeout: 5 });
});

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

async function fingerprint(): Promise<string> {
  const rows = await sql`
    select (select count(*) from remote_session) as sessions, (select count(*) from desktop_task) as tasks,
           (select count(*) from remote_session_idempotency) as keys, (select count(*) from desktop_runner) as runners`;
  return createHash("sha256").update(JSON.stringify(rows)).digest("hex");
}

it("answers 4 200 generated bad arguments across every capability with typed errors, changing nothing", async () => {
  const before = await fingerprint();
  const ctx = memberContext(member);
  // Every body carries a mistyped field each capability knows (target, sessionId or includeModels)
  // beside one none knows (set aside and named in `ignored`), or is no object at all: never valid.
  const body = fc.oneof(
    fc
      .record({ __unknown: fc.anything() }, { requiredKeys: ["__unknown"] })
      .chain((bad) =>
        fc
          .record(
            { target: fc.integer(), sessionId: fc.integer(), includeModels: fc.string(), prompt: fc.string(), limit: fc.integer(), waitMs: fc.integer() },
            { requiredKeys: ["target", "sessionId", "includeModels"] },
          )
          .map((r) => ({ ...r, ...bad })),
      ),
    // No body reads as {} (valid for list and targets), so null and undefined are not generated;
    // a string is read as JSON, so none that parses to an object.
    fc.oneof(
      fc.string().filter((s) => !isJsonObject(s)),
      fc.integer(),
      fc.boolean(),
      fc.array(fc.anything(), { maxLength: 3 }),
    ),
    fc
      .string()
      .map((s) => `{${s}`)
      .filter((s) => !isJsonObject(s)),
  );
  for (const action of ACTIONS) {
    await fc.assert(
      fc.asyncProperty(body, async (input) => {
        const result = await gateway.source.execute(ctx, parseName(capabilityName(action))!, { body: input });
        expect(result.isError).toBe(true);
        expect(SESSION_ERROR_CODES).toContain((result.structuredContent as { error: string }).error);
        expect((result.structuredContent as { error: string }).error).not.toBe("internal_error");
        if (typeof input === "object" && input !== null && "__unknown" in input) expect(result.structuredContent.ignored).toContain("__unknown");
      }),
      { numRuns: 700 },
    );
  }
  expect(await fingerprint()).toBe(before);
}, 120_000);
