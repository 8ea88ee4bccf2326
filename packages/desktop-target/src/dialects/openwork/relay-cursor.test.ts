import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeRelayCursor, encodeRelayCursor } from "./relay-cursor.js";

const sessionId = "rs_01jrelaycursor0000000000000";
// A relay cursor as the gateway wrote them before the desktop target owned them: still read, and written alike.
const written = (members: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ v: "relay", s: createHash("sha256").update(sessionId).digest("base64url").slice(0, 10), ...members })).toString("base64url");

describe("relay cursors", () => {
  it("are written byte for byte as before, and cursors handed out before are read", () => {
    expect(encodeRelayCursor(sessionId, { theirs: "msg_9", pending: "rst_1" })).toBe(written({ c: "msg_9", r: "rst_1" }));
    expect(encodeRelayCursor(sessionId, { theirs: null })).toBe(written({ c: null }));
    expect(decodeRelayCursor(sessionId, written({ c: "msg_9", r: "rst_1", o: "abc" }))).toEqual({ theirs: "msg_9", pending: "rst_1" });
    expect(decodeRelayCursor(sessionId, undefined)).toEqual({ theirs: null });
  });

  it("refuses a cursor whose position is not the other party's cursor, or of another session", () => {
    for (const bad of [written({ c: 7 }), written({}), encodeRelayCursor("rs_01jothersession000000000000", { theirs: "m" })]) {
      expect(() => decodeRelayCursor(sessionId, bad)).toThrow(/not a cursor of this session/);
    }
  });
});
