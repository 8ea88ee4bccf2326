import { createSessionLedger, migrate, SESSION_LIMITS } from "@openwork/remote-session-core";
import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { boundPayload, RESULT_MAX_BYTES } from "./bound-payload.js";
import { createRemoteSessionSource, type RemoteSessionSource } from "./create-remote-session-source.js";
import { parseName } from "./parse-name.js";
import { remoteSessionContext } from "./registry-context.js";
import { createScriptedTarget, type ScriptedTarget } from "./scripted-target.testing.js";
import type { ToolResult } from "./to-tool-result.js";

const db = useTestDatabase();
const ctx = remoteSessionContext({ organizationId: "org_size", userId: "user_size", orgMembershipId: "mem_size", scopes: ["mcp:read", "mcp:write"] });
let cloud: ScriptedTarget;
let source: RemoteSessionSource;

beforeAll(async () => {
  await migrate(db.current.sql);
  cloud = createScriptedTarget("cloud");
  source = createRemoteSessionSource({ targets: [cloud], ledger: createSessionLedger(db.current.sql) });
});

/** The result's one text part, checked against the bound every client passes whole. */
const within = (result: ToolResult) => {
  expect(result.content).toHaveLength(1);
  expect(Buffer.byteLength(result.content[0]!.text)).toBeLessThanOrEqual(RESULT_MAX_BYTES);
  expect(result.content[0]!.text).toBe(JSON.stringify(result.structuredContent));
  return result.structuredContent;
};
const run = async (name: string, body: unknown) => within(await source.execute(ctx, parseName(name)!, { body }));

/** Follows `next` reads from `body` until the session has nothing more, collecting every message. */
async function readAll(body: Record<string, unknown>) {
  const texts: string[] = [];
  for (let read = await run("remote-session:read", body); ; ) {
    texts.push(...(read.messages as { text: string }[]).map((m) => m.text));
    if (!read.hasMore) return texts;
    const next = read.next as { name: string; body: Record<string, unknown> };
    expect(next.name).toBe("remote-session:read");
    read = await run(next.name, { ...next.body, waitMs: 0 });
  }
}

describe("results sized for the clients that read them", () => {
  it("pages a long transcript by cursor: every result fits, no message is lost or repeated, `next` is whole", async () => {
    const sessionId = String((await run("remote-session:create", { prompt: `p0 ${"a".repeat(3_900)}` })).sessionId);
    const sent: string[] = [`p0 ${"a".repeat(3_900)}`];
    for (let i = 1; i < 8; i++) {
      cloud.reply(sessionId, `r${i} ${"b".repeat(3_900)}`);
      sent.push(`r${i} ${"b".repeat(3_900)}`);
      const prompt = `p${i} ${"c".repeat(3_900)}`;
      await run("remote-session:send", { sessionId, prompt });
      sent.push(prompt);
    }
    const first = await run("remote-session:read", { sessionId, limit: 100 });
    expect(first).toMatchObject({ hasMore: true, next: { name: "remote-session:read", body: { sessionId, cursor: first.cursor } } });
    expect(await readAll({ sessionId, limit: 100 })).toEqual(sent);
  });

  it("cuts a single message too large for one result (multi-byte text), marks it truncated, and still moves on", async () => {
    const sessionId = String((await run("remote-session:create", { prompt: "漢".repeat(3_990) })).sessionId);
    cloud.reply(sessionId, "字".repeat(3_990));
    const read = await run("remote-session:read", { sessionId });
    expect(read.messages).toHaveLength(1);
    expect(read).toMatchObject({ hasMore: true, messages: [{ truncated: true }], bounded: { shortened: ["messages.0.text"] } });
    expect((await readAll({ sessionId })).map((t) => t[0])).toEqual(["漢", "字"]);
  });

  it("hands a final reply longer than one result in parts, each read naming the one that goes on", async () => {
    const reply = Array.from({ length: 18_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
    const sessionId = String((await run("remote-session:create", { prompt: "write a lot" })).sessionId);
    cloud.reply(sessionId, reply);
    let read = await run("remote-session:read", { sessionId });
    const next = read.next;
    let text = String(read.finalAssistantText);
    for (let parts = 1; read.finalTextContinues; parts++) {
      expect(parts).toBeLessThan(8);
      const more = read.finalTextContinues as { name: string; body: Record<string, unknown> };
      read = await run(more.name, more.body);
      // The same page each time: only the reply goes on.
      expect(read.next).toEqual(next);
      text += String(read.finalAssistantText);
    }
    expect(text).toBe(reply);
  });

  it("says where a reply longer than reads carry stops, and how the rest is had", async () => {
    // 60 010 characters: reads carry the first SESSION_LIMITS.finalText of them.
    const reply = Array.from({ length: 60_010 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
    const sessionId = String((await run("remote-session:create", { prompt: "write even more" })).sessionId);
    cloud.reply(sessionId, reply);
    let read = await run("remote-session:read", { sessionId });
    let text = String(read.finalAssistantText);
    for (let parts = 1; read.finalTextContinues; parts++) {
      expect(parts).toBeLessThan(10);
      expect(read).not.toHaveProperty("finalTextCut");
      const more = read.finalTextContinues as { name: string; body: Record<string, unknown> };
      read = await run(more.name, more.body);
      text += String(read.finalAssistantText);
    }
    expect(text).toBe(reply.slice(0, SESSION_LIMITS.finalText));
    expect(read.finalTextCut).toEqual({ shownChars: SESSION_LIMITS.finalText, message: expect.stringContaining("the rest in the session itself") });
    expect(read).not.toHaveProperty("finalTextTruncated");
  });

  it("shortens a long reply and drops the last of a long list, saying so, and never touches next or a cursor", () => {
    const next = { name: "remote-session:read", body: { sessionId: "rs_1", cursor: "c".repeat(500), waitMs: 20_000 } };
    const bounded = boundPayload({ sessionId: "rs_1", finalAssistantText: "x".repeat(20_000), cursor: "c".repeat(500), next });
    expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    expect(bounded).toMatchObject({ next, cursor: "c".repeat(500), bounded: { maxBytes: RESULT_MAX_BYTES, shortened: ["finalAssistantText"] } });
    const matches = Array.from({ length: 60 }, (_, i) => ({ name: `m${i}`, argumentsSchema: { description: "s".repeat(190), i } }));
    const search = boundPayload({ matches });
    expect(Buffer.byteLength(JSON.stringify(search))).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    const kept = (search.matches as { name: string }[]).map((m) => m.name);
    expect(kept).toEqual(matches.slice(0, kept.length).map((m) => m.name));
    expect(search.bounded).toMatchObject({ omitted: { matches: 60 - kept.length } });
  });

  it("lists a full page of long titles in pages that fit", async () => {
    const ledger = createSessionLedger(db.current.sql);
    const owner = { organizationId: "org_size", userId: "user_size" };
    for (let i = 0; i < 50; i++) await ledger.insert(owner, { target: "cloud", title: `${String(i).padStart(2, "0")} ${"t".repeat(110)}`, state: "idle" });
    const seen = new Set<string>();
    let page = await run("remote-session:list", { limit: 50 });
    for (;;) {
      for (const s of page.sessions as { sessionId: string }[]) seen.add(s.sessionId);
      if (!page.cursor) break;
      page = await run("remote-session:list", { limit: 50, cursor: page.cursor });
    }
    expect(seen.size).toBeGreaterThanOrEqual(50);
  });
});
