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

  it("say who was notified of the waiting request, and which session spawned this one", () => {
    const payload = CardPayloadSchema.parse({
      sessionId: "rs_2",
      title: "Deploy",
      state: "waiting_input",
      notified: [
        { channel: "email", at: "2026-12-01T10:00:02.000Z" },
        { channel: "webhook", at: "2026-12-01T10:00:05.000Z", kind: "waiting_input" },
      ],
      spawnedBy: { sessionId: "rs_parent", title: "Release 1.2" },
    });
    const text = cardText(payload);
    expect(text).toContain("The member was notified by email at 2026-12-01T10:00:02.000Z");
    expect(text).toContain("The member was notified by webhook at 2026-12-01T10:00:05.000Z");
    expect(text).toContain("Spawned by: Release 1.2");
    expect(cardText({ ...payload, spawnedBy: { sessionId: "rs_parent" }, notified: [] })).toContain("Spawned by: rs_parent");
    expect(cardText({ ...payload, spawnedBy: undefined, notified: undefined })).not.toMatch(/notified|Spawned/);
  });

  it("is self-contained: no external script, style or fetch", () => {
    expect(CARD_HTML).not.toMatch(/<script[^>]+src=|<link[^>]+href=|fetch\(|XMLHttpRequest/);
    expect(CARD_HTML).not.toContain("innerHTML");
  });
});
