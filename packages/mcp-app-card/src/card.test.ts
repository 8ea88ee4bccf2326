import { describe, expect, it } from "vitest";
import { CARD_HTML } from "./card-html.js";
import { CardPayloadSchema } from "./card-payload.js";
import { cardText } from "./text-fallback.js";

describe("card payload and text fallback", () => {
  it("say the same facts, link included", () => {
    const payload = CardPayloadSchema.parse({
      sessionId: "rs_1",
      title: "Fix the build",
      target: "desktop",
      state: "running",
      lastActivityAt: "2026-11-29T12:00:00.000Z",
      webUrl: "https://web.openwork.test/s/1",
    });
    const text = cardText(payload);
    for (const fact of ["Fix the build", "rs_1", "desktop", "running", "2026-11-29T12:00:00.000Z", "https://web.openwork.test/s/1"]) {
      expect(text).toContain(fact);
    }
  });

  it("is self-contained: no external script, style or fetch", () => {
    expect(CARD_HTML).not.toMatch(/<script[^>]+src=|<link[^>]+href=|fetch\(|XMLHttpRequest/);
    expect(CARD_HTML).not.toContain("innerHTML");
  });
});
