import { describe, expect, it } from "vitest";
import { DEFAULT_DESKTOP_TIMINGS, describeWindow, resolveTimings } from "./desktop-timings.js";
import { DEFAULT_STREAM_LIMITS } from "./wake/wake-hub.js";

describe("desktop timings", () => {
  it("resolves the given timings over the defaults, and refuses one that is not a positive number", () => {
    expect(resolveTimings({ presenceWindowMs: 60_000, leaseMs: undefined })).toEqual({
      ...DEFAULT_DESKTOP_TIMINGS,
      presenceWindowMs: 60_000,
      // A quarter of a window shorter than 2 minutes, so a desktop stays seen between flushes.
      presenceFlushMs: 15_000,
    });
    expect(resolveTimings({ presenceWindowMs: 60_000, presenceFlushMs: 50_000 }).presenceFlushMs).toBe(50_000);
    expect(() => resolveTimings({ presenceWindowMs: 60_000, presenceFlushMs: 60_000 })).toThrow(/presenceFlushMs must be less than presenceWindowMs/);
    expect(() => resolveTimings({ leaseMs: -1 })).toThrow(/leaseMs must be a positive number/);
    expect(() => resolveTimings({ sweepIntervalMs: Number.NaN })).toThrow(/sweepIntervalMs/);
    expect(() => resolveTimings({ presenceWindow: 5 } as never)).toThrow(/unknown timing presenceWindow/);
  });

  it("takes a registration cache of 0 (off) to 1 s, and refuses a longer one: it bounds how long a revoked runner is served", () => {
    expect(resolveTimings().registrationCacheMs).toBe(1_000);
    expect(resolveTimings({ registrationCacheMs: 0 }).registrationCacheMs).toBe(0);
    expect(resolveTimings({ registrationCacheMs: 250 }).registrationCacheMs).toBe(250);
    expect(() => resolveTimings({ registrationCacheMs: 1_001 })).toThrow(/registrationCacheMs must be 0 \(off\) to 1000 ms/);
    expect(() => resolveTimings({ registrationCacheMs: -1 })).toThrow(/registrationCacheMs/);
  });

  it("keeps no module state a caller could change: the defaults are frozen", () => {
    // A default changed through the exported object would change every channel built after it.
    expect(() => void ((DEFAULT_DESKTOP_TIMINGS as { presenceWindowMs: number }).presenceWindowMs = 1)).toThrow(TypeError);
    expect(() => void ((DEFAULT_STREAM_LIMITS as { perRunner: number }).perRunner = 99)).toThrow(TypeError);
    expect(resolveTimings().presenceWindowMs).toBe(10 * 60_000);
  });

  it("names a window in words for messages", () => {
    expect([describeWindow(600_000), describeWindow(60_000), describeWindow(90_000), describeWindow(1_000)]).toEqual([
      "10 minutes",
      "1 minute",
      "90 seconds",
      "1 second",
    ]);
  });
});
