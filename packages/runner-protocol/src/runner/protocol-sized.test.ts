import { describe, expect, it } from "vitest";
import { LIMITS } from "../v1/limits.js";
import { protocolSized, splitText } from "./protocol-sized.js";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("protocol-sized events", () => {
  it("splits a long delta into deltas within the limit, never inside a surrogate pair", () => {
    const text = `${"a".repeat(LIMITS.deltaText - 1)}😀${"b".repeat(2 * LIMITS.deltaText)}`;
    const pieces = protocolSized({ type: "assistant.delta", payload: { messageId: "m1", text } });
    expect(pieces.length).toBe(4);
    for (const piece of pieces) {
      expect(piece.type).toBe("assistant.delta");
      const pieceText = (piece.payload as { text: string }).text;
      expect(pieceText.length).toBeLessThanOrEqual(LIMITS.deltaText);
      expect(loneSurrogate.test(pieceText)).toBe(false);
    }
    expect(pieces.map((p) => (p.payload as { text: string }).text).join("")).toBe(text);
  });

  it("keeps a final within the limit and warns that it was cut", () => {
    const [final, warning] = protocolSized({ type: "assistant.final", payload: { messageId: "m1", text: "x".repeat(LIMITS.finalText + 10) } });
    expect((final!.payload as { text: string }).text.length).toBe(LIMITS.finalText);
    expect(warning).toMatchObject({ type: "warning", payload: { code: "reply_truncated" } });
    expect(protocolSized({ type: "assistant.final", payload: { messageId: "m1", text: "short" } })).toHaveLength(1);
  });

  it("cuts text of any length exactly", () => {
    expect(splitText("", 3)).toEqual([]);
    expect(splitText("abcdefg", 3)).toEqual(["abc", "def", "g"]);
  });
});
