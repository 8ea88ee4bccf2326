import { describe, expect, it } from "vitest";
import { newSessionId, isSessionId } from "./ids.js";
import { SESSION_STATES, SESSION_TRANSITIONS, canTransition, statesLeadingTo, acceptsPrompt } from "./session-state.js";
import { decodeCursor, encodeCursor } from "./transcript/cursor.js";
import { boundText } from "./transcript/transcript-message.js";
import { SessionFailure, sessionError } from "./errors/session-error.js";
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

  it("bound text without splitting a surrogate pair", () => {
    expect(boundText("abc", 5)).toEqual({ text: "abc", truncated: false });
    expect(boundText("ab😀cd", 3)).toEqual({ text: "ab", truncated: true });
  });
});

describe("errors and digests", () => {
  it("take retryable from the one table", () => {
    expect(sessionError("desktop_offline", "x", { action: "open the app" })).toMatchObject({ retryable: true, action: "open the app" });
    expect(sessionError("unknown_session", "x").retryable).toBe(false);
    expect(sessionError("unknown_session", "x").referenceId).toMatch(/^ref_[0-9a-f]{12}$/);
  });

  it("digest arguments canonically", () => {
    expect(canonicalDigest({ a: 1, b: [1, { c: 2, d: undefined }] })).toBe(canonicalDigest({ b: [1, { c: 2 }], a: 1 }));
    expect(canonicalDigest({ a: 1 })).not.toBe(canonicalDigest({ a: "1" }));
  });
});
