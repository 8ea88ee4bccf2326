import { expect, it } from "vitest";
import { formatTraceparent, parseTraceparent } from "./trace-context.js";

const ids = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };

it("writes and reads W3C traceparent (version 00)", () => {
  expect(formatTraceparent(ids)).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual(ids);
});

it("carries nothing for a span nobody records, and reads nothing from a malformed or all-zero value", () => {
  expect(formatTraceparent(undefined)).toBeNull();
  expect(formatTraceparent({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 })).toBeNull();
  for (const bad of [undefined, "", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, "00-XYZ-1-01"]) {
    expect(parseTraceparent(bad)).toBeNull();
  }
});
