import { expect, it } from "vitest";
import { sizeConnectionLimits } from "./node/connection-limits.js";
import { createOpenSchedule, runnerStreamsForHeap } from "./process-limits.js";

it("sizes the limits by the process's files and heap: requests a thirty-second of the files (256 to 4 096), streams the rest within half the heap", () => {
  const heap = 4 * 1024 ** 3;
  expect(runnerStreamsForHeap(heap)).toBe(65_536);
  expect(sizeConnectionLimits({ fileLimit: 20_000, heapLimitBytes: heap })).toMatchObject({ maxConnections: 617, maxStreams: 19_127 });
  expect(sizeConnectionLimits({ fileLimit: 1_048_576, heapLimitBytes: heap })).toMatchObject({ maxConnections: 4_096, maxStreams: 65_536 });
  expect(sizeConnectionLimits({ fileLimit: 1_024, heapLimitBytes: heap })).toMatchObject({ maxConnections: 256, maxStreams: 512 });
  expect(sizeConnectionLimits({ fileLimit: null, heapLimitBytes: 512 * 1024 ** 2 })).toMatchObject({ maxConnections: 4_096, maxStreams: 8_192 });
});

it("admits the burst, then gives each refused open its own later turn, one slot (1/perSecond) apart, and lets the queue drain", () => {
  let clock = 0;
  const schedule = createOpenSchedule({ burst: 3, perSecond: 10 }, { now: () => clock, random: () => 0 });
  expect([schedule.take(), schedule.take(), schedule.take()]).toEqual([null, null, null]);
  // A fleet arriving at once: 100 ms, 200 ms, 300 ms… (no jitter here).
  expect(Array.from({ length: 5 }, () => schedule.take())).toEqual([100, 200, 300, 400, 500]);
  // The first comes back on its turn and a token has refilled for it.
  clock = 100;
  expect(schedule.take()).toBeNull();
  // A newcomer queues behind those still waiting.
  expect(schedule.take()).toBe(500);
  // Later, the queue has drained: the bucket refilled to its burst.
  clock = 10_000;
  expect([schedule.take(), schedule.take(), schedule.take(), schedule.take()]).toEqual([null, null, null, 100]);
});
