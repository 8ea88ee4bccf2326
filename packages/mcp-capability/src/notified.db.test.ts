import { createSessionLedger, migrate } from "@openwork/remote-session-core";
import type { SessionLedger } from "@openwork/remote-session-core/internal";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createRemoteSessionSource, type RemoteSessionSourceOptions } from "./create-remote-session-source.js";
import { type NotificationLog, NOTIFIED_LOOKUP_TIMEOUT_MS, type SentNotification } from "./notification-log.js";
import { parseName } from "./parse-name.js";
import { remoteSessionContext } from "./registry-context.js";
import { createScriptedTarget, type ScriptedTarget } from "./scripted-target.testing.js";

// A read of a session that waits on the human says which notifications went out for that
// request, through the host's notification log (a port: this package imports no notifier).
const db = useTestDatabase();
const ctx = remoteSessionContext({ organizationId: "org_n", userId: "user_n", orgMembershipId: "mem_n", scopes: ["mcp:read", "mcp:write"] });
const ASKED_AT = "2026-12-01T10:00:00.000Z";
const permission = { kind: "permission" as const, id: "per_1", title: "bash", detail: "rm -rf build", askedAt: ASKED_AT };
let cloud: ScriptedTarget;
let ledger: SessionLedger;

beforeAll(async () => {
  await migrate(db.current.sql);
  cloud = createScriptedTarget("cloud");
  ledger = createSessionLedger(db.current.sql);
});

/** A source over the shared target and ledger, with the given notification log, and what it logged. */
function sourceWith(notificationLog?: NotificationLog) {
  const warnings: string[] = [];
  const logger: RemoteSessionSourceOptions["logger"] = { info() {}, warn: (m, f) => void warnings.push(`${m} ${JSON.stringify(f)}`), error() {} };
  const source = createRemoteSessionSource({ targets: [cloud], ledger, logger, ...(notificationLog ? { notificationLog } : {}) });
  const run = async (name: string, body: unknown) => {
    const result = await source.execute(ctx, parseName(name)!, { body });
    // The text part is the structured content, so a model reading either sees `notified`.
    expect(result.content[0]!.text).toBe(JSON.stringify(result.structuredContent));
    expect(result.isError).toBeUndefined();
    return result.structuredContent;
  };
  return { run, warnings };
}

/** A log that answers `sent` and records what it was asked. */
function recordingLog(sent: readonly SentNotification[]) {
  const asked: { scope: unknown; sessionId: string; since: Date | undefined }[] = [];
  const log: NotificationLog = {
    sentFor: async (scope, sessionId, since) => {
      asked.push({ scope, sessionId, since });
      return sent;
    },
  };
  return { log, asked };
}

async function waitingSession(): Promise<string> {
  const { run } = sourceWith();
  const sessionId = String((await run("remote-session:create", { prompt: "clean the build" })).sessionId);
  cloud.ask(sessionId, permission);
  return sessionId;
}

describe("read shows the notifications sent for the pending request", () => {
  it("carries notified: [{ channel, at }] since the request was asked, oldest first, in the structured content and the text", async () => {
    const sessionId = await waitingSession();
    const { log, asked } = recordingLog([
      { channel: "webhook", at: new Date("2026-12-01T10:00:05.000Z"), kind: "waiting_input" },
      // Sent before this request was asked (an earlier one): a log that ignores `since` still does not show it.
      { channel: "email", at: new Date("2026-12-01T09:00:00.000Z"), kind: "waiting_input" },
      { channel: "email", at: new Date("2026-12-01T10:00:02.000Z") },
    ]);
    const read = await sourceWith(log).run("remote-session:read", { sessionId });
    expect(read).toMatchObject({ state: "waiting_input", pending: { id: "per_1" } });
    expect(read.notified).toEqual([
      { channel: "email", at: "2026-12-01T10:00:02.000Z" },
      { channel: "webhook", at: "2026-12-01T10:00:05.000Z", kind: "waiting_input" },
    ]);
    expect(asked).toEqual([{ scope: { organizationId: "org_n", memberId: "mem_n" }, sessionId, since: new Date(ASKED_AT) }]);
  });

  it("carries an empty notified when the log has none (nobody was told), and none at all without a log", async () => {
    const sessionId = await waitingSession();
    expect((await sourceWith(recordingLog([]).log).run("remote-session:read", { sessionId })).notified).toEqual([]);
    const without = await sourceWith().run("remote-session:read", { sessionId });
    expect(without).toMatchObject({ state: "waiting_input", pending: { id: "per_1" } });
    expect(without).not.toHaveProperty("notified");
  });

  it("asks the log nothing and carries no notified when nothing is pending", async () => {
    const { log, asked } = recordingLog([{ channel: "email", at: new Date() }]);
    const { run } = sourceWith(log);
    const sessionId = String((await run("remote-session:create", { prompt: "just work" })).sessionId);
    cloud.reply(sessionId, "done");
    const read = await run("remote-session:read", { sessionId });
    expect(read).toMatchObject({ state: "idle" });
    expect(read).not.toHaveProperty("notified");
    expect(asked).toEqual([]);
  });

  it("still answers the read when the log throws or hangs: logged, notified left out", async () => {
    const sessionId = await waitingSession();
    const throwing = sourceWith({
      sentFor: async () => {
        throw Object.assign(new Error("connection refused to notify db"), { code: "ECONNREFUSED" });
      },
    });
    const read = await throwing.run("remote-session:read", { sessionId });
    expect(read).toMatchObject({ state: "waiting_input", pending: { id: "per_1" }, next: { name: "remote-session:respond" } });
    expect(read).not.toHaveProperty("notified");
    expect(throwing.warnings).toHaveLength(1);
    expect(throwing.warnings[0]).toContain("ECONNREFUSED");
    expect(throwing.warnings[0]).not.toContain("connection refused");

    const hanging = sourceWith({ sentFor: () => new Promise(() => {}) });
    const started = performance.now();
    const slow = await hanging.run("remote-session:read", { sessionId });
    expect(performance.now() - started).toBeLessThan(NOTIFIED_LOOKUP_TIMEOUT_MS + 1_500);
    expect(slow).toMatchObject({ state: "waiting_input", pending: { id: "per_1" } });
    expect(slow).not.toHaveProperty("notified");
    expect(hanging.warnings[0]).toContain("NotificationLogTimeout");
  });
});
