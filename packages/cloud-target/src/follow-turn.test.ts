import type { ObservedState } from "@openwork/remote-session-core/internal";
import { silentLogger } from "@openwork/remote-session-core";
import { expect, it } from "vitest";
import { type FollowedTurn, followTurn, type Look } from "./follow-turn.js";
import type { SessionSignals, SessionWatch, StepSpend } from "./worker-events.js";

/** A live session watch whose signals the test moves (`step`), waking whoever waits on it. */
function liveWatch() {
  const stepSpend = new Map<string, StepSpend>();
  const signals: SessionSignals = { liveText: new Map(), liveTextPartial: new Set(), error: null, status: { type: "busy" }, requests: 0, steps: 0, stepSpend };
  let version = 0;
  const waiting = new Set<() => void>();
  const watch: SessionWatch = {
    connected: Promise.resolve(true),
    live: () => true,
    version: () => version,
    signals: () => signals,
    changed: (seen, ms) =>
      new Promise<void>((resolve) => {
        if (version !== seen) return resolve();
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          waiting.delete(done);
          resolve();
        }
        waiting.add(done);
      }),
    close: () => {},
  };
  const bump = () => {
    version++;
    for (const wake of [...waiting]) wake();
  };
  return {
    watch,
    step: (partId: string, spent: StepSpend) => {
      stepSpend.set(partId, spent);
      signals.steps = (signals.steps ?? 0) + 1;
      bump();
    },
    end: () => {
      signals.status = null;
      bump();
    },
  };
}

const running: Look["view"] = { state: "running" } as Look["view"];

it("tells a budgeted turn's step spend as the step ends, while a look is still under way", async () => {
  const { watch, step, end } = liveWatch();
  const observed: ObservedState[] = [];
  let release: (look: Look) => void = () => {};
  let looks = 0;
  const controller = new AbortController();
  const turn: FollowedTurn = {
    call: { organizationId: "org_f", userId: "usr_f", memberId: "mem_f", referenceId: "ref_f" },
    sessionId: "rs_follow",
    from: ["running"],
    promptAt: Date.now(),
    budgeted: true,
    // The first look (before any step) answers at once; every later one waits for the test.
    look: async () =>
      looks++ === 0
        ? { view: running, spend: { tokensIn: 100, tokensOut: 50, runningMs: 0, reported: true }, counted: new Set(["prt_before"]) }
        : new Promise<Look>((resolve) => {
            release = resolve;
          }),
    onObserved: async (_call, _id, state) => {
      observed.push(state);
      return true;
    },
    signal: controller.signal,
  };
  const following = followTurn(watch, turn, Date.now() + 10_000, 60_000, silentLogger);
  await new Promise((resolve) => setTimeout(resolve, 10));
  step("prt_before", { inputTokens: 100, outputTokens: 50 });
  step("prt_1", { inputTokens: 10, outputTokens: 5, costMicros: 300 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  // Told from the first look and the step heard since, the step the look counted not twice; no look has come back.
  expect(looks).toBe(2);
  expect(observed).toEqual([{ from: [], state: "running", spend: { tokensIn: 110, tokensOut: 55, costMicros: 300, runningMs: 0, reported: true } }]);
  // Nothing more heard: nothing told again.
  step("prt_1", { inputTokens: 10, outputTokens: 5, costMicros: 300 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(observed).toHaveLength(1);
  // The look comes back with the turn over: its exact totals are told, and the follow ends.
  end();
  release({
    view: { state: "idle" } as Look["view"],
    spend: { tokensIn: 110, tokensOut: 55, runningMs: 900, reported: true },
    counted: new Set(["prt_before", "prt_1"]),
  });
  await following;
  expect(observed.at(-1)).toMatchObject({ state: "idle", spend: { runningMs: 900 } });
  controller.abort();
});
