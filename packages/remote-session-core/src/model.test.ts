import { describe, expect, it } from "vitest";
import { newSessionId, isSessionId } from "./ids.js";
import { SESSION_STATES, SESSION_TRANSITIONS, canTransition, statesLeadingTo, acceptsPrompt } from "./session-state.js";
import { decodeCursor, decodeTargetCursor, encodeCursor, encodeTargetCursor, withObservation } from "./transcript/cursor.js";
import { boundText } from "./transcript/transcript-message.js";
import { sliceTranscript } from "./transcript/slice-transcript.js";
import { SessionFailure, sessionError } from "./errors/session-error.js";
import { defineErrorCodes } from "./errors/define-error-codes.js";
import { canonicalDigest } from "./digest.js";

describe("session ids", () => {
  it("are prefixed, unique and sort by creation time", () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000].map((t) => newSessionId(t));
    for (const id of ids) expect(isSessionId(id)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 1000 }, () => newSessionId())).size).toBe(1000);
    expect(isSessionId("rs_short")).toBe(false);
  });
});

describe("session states", () => {
  it("have a transition row for every state, naming only known states", () => {
    expect(Object.keys(SESSION_TRANSITIONS).sort()).toEqual([...SESSION_STATES].sort());
    for (const targets of Object.values(SESSION_TRANSITIONS)) for (const s of targets) expect(SESSION_STATES).toContain(s);
  });

  it("keep expired final and let a follow-up revive a stopped session", () => {
    expect(canTransition("expired", "running")).toBe(false);
    expect(acceptsPrompt("expired")).toBe(false);
    expect(acceptsPrompt("stopped")).toBe(true);
    expect(statesLeadingTo("interrupted").sort()).toEqual(["interrupted", "queued", "running", "waiting_input"].sort());
    // A lost desktop that comes back reports where its turn ended.
    expect(statesLeadingTo("idle")).toContain("interrupted");
  });
});

describe("transcript cursors", () => {
  it("round-trip and are bound to their session", () => {
    const a = newSessionId();
    const b = newSessionId();
    expect(decodeCursor(a, encodeCursor(a, 7))).toBe(7);
    expect(decodeCursor(a, undefined)).toBe(0);
    for (const bad of [encodeCursor(b, 7), "garbage", Buffer.from('{"v":1,"p":-1}').toString("base64url")]) {
      try {
        decodeCursor(a, bad);
        expect.unreachable();
      } catch (error) {
        expect(SessionFailure.isInstance(error) && error.error.error).toBe("invalid_capability_arguments");
      }
    }
  });

  it("carry a target's own members in its cursors, bound to the session and to the kind", () => {
    const a = newSessionId();
    const cursor = encodeTargetCursor(a, "kiosk", { booth: "b7", page: 2 });
    expect(decodeTargetCursor(a, "kiosk", cursor)).toEqual({ booth: "b7", page: 2 });
    // The core's observation rides along and stays the core's.
    expect(decodeTargetCursor(a, "kiosk", withObservation(a, cursor, "seen"))).toEqual({ booth: "b7", page: 2 });
    for (const [session, kind, bad] of [
      [newSessionId(), "kiosk", cursor],
      [a, "other", cursor],
      [a, "kiosk", encodeCursor(a, 1)],
      [a, "kiosk", "garbage"],
    ] as const) {
      expect(() => decodeTargetCursor(session, kind, bad)).toThrow(/not a cursor of this session/);
    }
    expect(() => decodeCursor(a, cursor)).toThrow(SessionFailure);
    expect(() => encodeTargetCursor(a, "kiosk", { s: "x" })).toThrow(/every cursor's own/);
  });

  it("bound text without splitting a surrogate pair", () => {
    expect(boundText("abc", 5)).toEqual({ text: "abc", truncated: false });
    expect(boundText("ab😀cd", 3)).toEqual({ text: "ab", truncated: true });
  });
});

describe("errors and digests", () => {
  it("take retryable from the core's table, or from the target's own", () => {
    expect(sessionError("unknown_session", "x").retryable).toBe(false);
    expect(sessionError("unknown_session", "x").referenceId).toMatch(/^ref_[0-9a-f]{12}$/);
    const own = defineErrorCodes({ kiosk_asleep: { retryable: true, action: "Wake the kiosk." }, kiosk_gone: { retryable: false } });
    expect(own.sessionError("kiosk_asleep", "x")).toMatchObject({ error: "kiosk_asleep", retryable: true, action: "Wake the kiosk." });
    expect(own.sessionError("kiosk_asleep", "x", { action: "Wake kiosk 3." }).action).toBe("Wake kiosk 3.");
    expect(own.sessionError("kiosk_gone", "x")).not.toHaveProperty("action");
    // The core's codes keep their rules in a target's builders.
    expect(own.sessionError("rate_limited", "x").retryable).toBe(true);
    expect(() => own.fail("kiosk_gone", "x")).toThrow(SessionFailure);
    expect(own.codes).toEqual({ kiosk_asleep: { retryable: true, action: "Wake the kiosk." }, kiosk_gone: { retryable: false } });
  });

  it("refuse a target table that redefines a core code", () => {
    expect(() => defineErrorCodes({ unknown_session: { retryable: true } })).toThrow(/unknown_session are the core's/);
  });

  it("digest arguments canonically", () => {
    expect(canonicalDigest({ a: 1, b: [1, { c: 2, d: undefined }] })).toBe(canonicalDigest({ b: [1, { c: 2 }], a: 1 }));
    expect(canonicalDigest({ a: 1 })).not.toBe(canonicalDigest({ a: "1" }));
  });
});

describe("final replies, edge-triggered against the reader's cursor", () => {
  const session = { id: "rs_01jfinal00000000000000000000", title: "t" };
  const message = (id: string, role: "user" | "assistant", text: string | null) => ({
    id,
    role,
    text,
    truncated: false,
    toolCalls: [],
    createdAt: "2026-12-01T00:00:00.000Z",
  });
  const slice = (messages: ReturnType<typeof message>[], finalIndex: number | null, cursor?: string) =>
    sliceTranscript({
      session,
      target: "desktop",
      state: finalIndex === null ? "running" : "idle",
      transcript: { messages, partialText: null, finalAssistant: finalIndex === null ? null : { index: finalIndex, text: messages[finalIndex]!.text! } },
      position: cursor === undefined ? 0 : decodeCursor(session.id, cursor),
      cursor,
      limit: 20,
    });

  it("reports a reply that became final after the reader passed its message, once", () => {
    const turn = [message("u1", "user", null), message("a1", "assistant", "done")];
    // The message arrives while its turn still runs: not final yet.
    const during = slice(turn, null);
    expect(during.messages).toHaveLength(2);
    expect(during.finalAssistantText).toBeUndefined();
    // The turn ends with nothing new to read: the reader learns its final reply now…
    const ended = slice(turn, 1, during.cursor);
    expect(ended.messages).toEqual([]);
    expect(ended.finalAssistantText).toBe("done");
    // …and never again.
    expect(slice(turn, 1, ended.cursor).finalAssistantText).toBeUndefined();
  });

  it("never reports an old turn's reply as the new one", () => {
    const turns = [message("u1", "user", null), message("a1", "assistant", "first"), message("u2", "user", null)];
    const read = slice(turns, 1);
    expect(read.finalAssistantText).toBe("first");
    expect(slice(turns, 1, read.cursor).finalAssistantText).toBeUndefined();
    // A cursor written before final replies were tracked counts everything before it as seen.
    expect(slice(turns, 1, encodeCursor(session.id, 3)).finalAssistantText).toBeUndefined();
  });
});
