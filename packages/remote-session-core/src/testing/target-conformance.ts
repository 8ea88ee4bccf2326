import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_ERROR_RULES } from "../errors/codes.js";
import { SessionFailure } from "../errors/session-error.js";
import type { SessionLedger } from "../ledger/session-ledger.js";
import type { ReadResult, Target, TargetCall } from "../target.js";
import type { TranscriptMessage } from "../transcript/transcript-message.js";
import { type TargetSessions, targetSessions } from "./target-sessions.js";

/** A target set up for the kit, with what the kit needs around it. */
export interface TargetUnderTest {
  target: Target;
  /** The session ledger on a migrated database (the core records session rows there). */
  ledger: SessionLedger;
  /** A fresh call of one owner; each call of `call()` is the same owner. */
  call(): TargetCall;
  /** A call of another owner in the same organization. */
  otherCall(): TargetCall;
  /** Extra create arguments this target needs in the kit (a desktop pin, a workspace). */
  createExtra?: Record<string, unknown>;
  /** How long a turn may take to answer here. Default 15 s. */
  turnTimeoutMs?: number;
  close?(): Promise<void>;
}

const codeOf = (error: unknown) => (SessionFailure.isInstance(error) ? error.error : error);

/** The names of a result's target fields that the target did not declare in `resultFields` (none, for a sound target). */
const undeclared = (target: Target, kind: "create" | "read", fields: Record<string, unknown> | undefined) =>
  Object.keys(fields ?? {}).filter((name) => !Object.hasOwn(target.resultFields?.[kind] ?? {}, name));

/**
 * The behaviours every Target must have, as vitest suites: create with and without a prompt,
 * send, read with cursor paging that never skips or repeats, `waitMs` edge-triggered against the
 * caller's cursor, stop, foreign ids invisible, idempotency, and errors as values with a
 * referenceId. The target is driven through the core (`createRemoteSessions`), as the capability
 * drives it. Call it at the top level of a test file.
 */
export function runTargetConformance(name: string, makeTarget: () => Promise<TargetUnderTest>): void {
  describe(`Target conformance: ${name}`, () => {
    let under: TargetUnderTest;
    let sessions: TargetSessions;
    const find = async (call: TargetCall, id: string) => {
      const session = await under.ledger.find(call, id);
      expect(session, `session ${id} is in the ledger`).not.toBeNull();
      return session!;
    };
    /** Reads from `cursor` until a reply the caller did not write arrives and the turn is over. */
    const replyAfter = async (id: string, cursor?: string): Promise<{ read: ReadResult; messages: TranscriptMessage[]; final?: string }> => {
      const deadline = Date.now() + (under.turnTimeoutMs ?? 15_000);
      const messages: TranscriptMessage[] = [];
      let position = cursor;
      let final: string | undefined;
      for (;;) {
        const read = await sessions.read(under.call(), await find(under.call(), id), { limit: 20, waitMs: 2_000, ...(position ? { cursor: position } : {}) });
        expect(undeclared(under.target, "read", read.fields), "read fields are declared in resultFields.read").toEqual([]);
        messages.push(...read.messages);
        position = read.cursor;
        // Edge-triggered: the final text comes with the slice holding its message, once.
        if (read.finalAssistantText !== undefined) {
          expect(final, "finalAssistantText is reported once per turn").toBeUndefined();
          final = read.finalAssistantText;
        }
        const replied = messages.some((m) => m.role === "assistant" && (m.text ?? "").length > 0);
        if (replied && !read.hasMore && !["queued", "waking", "running"].includes(read.state)) return { read, messages, ...(final ? { final } : {}) };
        if (Date.now() > deadline) throw new Error(`no reply within the turn timeout (state ${read.state})`);
      }
    };

    beforeAll(async () => {
      under = await makeTarget();
      sessions = targetSessions(under.target, under.ledger);
    }, 60_000);
    afterAll(async () => {
      await under?.close?.();
    });

    it("declares a name, a label and the v1 specification", () => {
      expect(under.target.specificationVersion).toBe("v1");
      expect(under.target.name).toMatch(/^[a-z][a-z0-9_]{0,31}$/);
      expect(under.target.label.length).toBeGreaterThan(0);
    });

    it("declares its own error codes apart from the core's, each with whether it is retryable", () => {
      for (const [code, rule] of Object.entries(under.target.errorCodes ?? {})) {
        expect(Object.hasOwn(SESSION_ERROR_RULES, code), `${code} is not one of the core's codes`).toBe(false);
        expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(typeof rule.retryable).toBe("boolean");
      }
    });

    it("creates without a prompt: a session that waits for one, with nothing to read", async () => {
      const created = await sessions.create(under.call(), { title: "conformance, no prompt", ...under.createExtra });
      expect(created).toMatchObject({ sessionId: expect.stringMatching(/^rs_/), target: under.target.name });
      const read = await sessions.read(under.call(), await find(under.call(), created.sessionId), { limit: 20, waitMs: 0 });
      expect(read.messages.filter((m) => m.role === "assistant")).toEqual([]);
      expect(read.finalAssistantText).toBeUndefined();
    });

    it("creates with a prompt and answers it; a follow-up is answered after the cursor, never repeating the first turn", async () => {
      const created = await sessions.create(under.call(), { title: "conformance", prompt: "first prompt", ...under.createExtra });
      expect(undeclared(under.target, "create", created.fields), "create fields are declared in resultFields.create").toEqual([]);
      const first = await replyAfter(created.sessionId);
      expect(first.read.state).toBe("idle");
      const sent = await sessions.send(under.call(), await find(under.call(), created.sessionId), { prompt: "second prompt" });
      expect(sent).toMatchObject({ sessionId: created.sessionId, state: "accepted", alreadyPresent: false, messageId: expect.any(String) });
      const second = await replyAfter(created.sessionId, first.read.cursor);
      const firstIds = new Set(first.messages.map((m) => m.id));
      expect(second.messages.some((m) => firstIds.has(m.id))).toBe(false);
      expect(second.final).toBeTruthy();

      // Paging one message at a time from the start sees every message once, in order.
      const all = await sessions.read(under.call(), await find(under.call(), created.sessionId), { limit: 100, waitMs: 0 });
      const paged: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 200; i++) {
        const page = await sessions.read(under.call(), await find(under.call(), created.sessionId), { limit: 1, waitMs: 0, ...(cursor ? { cursor } : {}) });
        paged.push(...page.messages.map((m) => m.id));
        cursor = page.cursor;
        if (!page.hasMore) break;
      }
      expect(paged).toEqual(all.messages.map((m) => m.id));
      expect(new Set(paged).size).toBe(paged.length);
    });

    it("waits on the caller's cursor: an old reply never ends a wait", async () => {
      const created = await sessions.create(under.call(), { title: "conformance wait", prompt: "only prompt", ...under.createExtra });
      const { read } = await replyAfter(created.sessionId);
      const started = Date.now();
      const waited = await sessions.read(under.call(), await find(under.call(), created.sessionId), { cursor: read.cursor, limit: 20, waitMs: 400 });
      expect(waited.messages).toEqual([]);
      expect(waited.finalAssistantText).toBeUndefined();
      expect(waited.cursor).toBe(read.cursor);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("stops: the answer is a boolean, and the session can be read afterwards", async () => {
      const created = await sessions.create(under.call(), { title: "conformance stop", ...under.createExtra });
      const stopped = await sessions.stop(under.call(), await find(under.call(), created.sessionId));
      expect(stopped).toEqual({ sessionId: created.sessionId, stopped: expect.any(Boolean) });
      await expect(sessions.read(under.call(), await find(under.call(), created.sessionId), { limit: 20, waitMs: 0 })).resolves.toMatchObject({
        sessionId: created.sessionId,
      });
    });

    it("refuses an answer to a request the session is not waiting on, as input_not_pending", async () => {
      const created = await sessions.create(under.call(), { title: "conformance respond", ...under.createExtra });
      const answer = { requestId: "per_nobodyasked", answer: { permission: "once" as const } };
      expect(await sessions.respond(under.call(), await find(under.call(), created.sessionId), answer).catch(codeOf)).toMatchObject({
        error: "input_not_pending",
      });
    });

    it("keeps sessions to their owner: another owner's id is as unknown as one never made", async () => {
      const created = await sessions.create(under.call(), { title: "conformance owner", ...under.createExtra });
      expect(await under.ledger.find(under.otherCall(), created.sessionId)).toBeNull();
      expect(await under.ledger.find(under.call(), "rs_00000000000000000000000000")).toBeNull();
    });

    it("creates once per idempotency key, and refuses the key with other arguments", async () => {
      const key = `conformance-${Date.now()}`;
      const make = (title: string) =>
        under.ledger.idempotent(under.call(), { operation: "create", key, args: { title } }, () =>
          sessions.create(under.call(), { title, ...under.createExtra }),
        );
      const [a, b] = await Promise.all([make("same"), make("same")]);
      expect(a.result.sessionId).toBe(b.result.sessionId);
      expect(await make("other").catch(codeOf)).toMatchObject({ error: "remote_session_idempotency_conflict", referenceId: expect.stringMatching(/^ref_/) });
    });

    it("answers a foreign cursor with a typed error value carrying a referenceId", async () => {
      const one = await sessions.create(under.call(), { title: "conformance cursor a", ...under.createExtra });
      const two = await sessions.create(under.call(), { title: "conformance cursor b", ...under.createExtra });
      const read = await sessions.read(under.call(), await find(under.call(), one.sessionId), { limit: 20, waitMs: 0 });
      const refused = await sessions.read(under.call(), await find(under.call(), two.sessionId), { cursor: read.cursor, limit: 20, waitMs: 0 }).catch(codeOf);
      expect(refused).toMatchObject({ error: "invalid_capability_arguments", retryable: false, referenceId: expect.stringMatching(/^ref_/) });
    });
  });
}
