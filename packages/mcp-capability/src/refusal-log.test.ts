import { describe, expect, it } from "vitest";
import { RefusalLog } from "./refusal-log.js";

describe("RefusalLog", () => {
  it("logs the first refusal of a key per window and, with the next one logged, how many were left out", () => {
    let now = 0;
    const log = new RefusalLog(60_000, () => now);
    expect(log.take("member-a")).toEqual({ leftOut: 0 });
    for (let i = 0; i < 999; i++) expect(log.take("member-a")).toBeNull();
    // Another member's refusals are their own.
    expect(log.take("member-b")).toEqual({ leftOut: 0 });
    now = 60_000;
    expect(log.take("member-a")).toEqual({ leftOut: 999 });
    expect(log.take("member-a")).toBeNull();
  });
});
