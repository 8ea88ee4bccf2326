import type { TaskEvent } from "@openwork/runner-protocol/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildTranscript, type TranscriptTask } from "./build-transcript.js";
import { emptyFold, foldEvents } from "./task-fold.js";

type Step = { type: "delta" | "final" | "tool"; message: "a" | "b" | "c"; text: string };
const at = new Date("2026-11-29T12:00:00Z");

function toEvents(steps: Step[]): { event: TaskEvent; receivedAt: Date }[] {
  return steps.map((step, i) => {
    const sequence = i + 1;
    const event: TaskEvent =
      step.type === "delta"
        ? { sequence, type: "assistant.delta", payload: { messageId: step.message, text: step.text } }
        : step.type === "final"
          ? { sequence, type: "assistant.final", payload: { messageId: step.message, text: step.text } }
          : { sequence, type: "tool.call", payload: { callId: `c${i}`, name: "bash", status: "completed" } };
    return { event, receivedAt: at };
  });
}

/**
 * The session as a reader sees it after `done` steps of a run through `turns`, one turn at a
 * time: a turn starts (claimed) with its first step, posts its events, and takes one more step
 * to finish; turns not reached yet are still queued.
 */
function snapshot(turns: Step[][], done: number): TranscriptTask[] {
  let left = done;
  return turns.map((steps, i) => {
    const taken = Math.min(left, steps.length);
    const started = left > 0;
    const finished = left > steps.length;
    left = Math.max(0, left - steps.length - 1);
    return {
      id: `rst_${i}`,
      state: finished ? "done" : started ? "claimed" : "queued",
      attempt: started || finished ? 1 : 0,
      messageId: `msg_${i}`,
      promptChars: 5,
      createdAt: at,
      pinnedRunnerId: null,
      claimDeadline: at,
      fold: foldEvents(emptyFold(), toEvents(steps.slice(0, taken))),
    };
  });
}

const step = fc.record({
  type: fc.constantFrom("delta", "final", "tool"),
  message: fc.constantFrom("a", "b", "c"),
  text: fc.string({ maxLength: 5 }),
}) as fc.Arbitrary<Step>;

describe("buildTranscript", () => {
  it("only ever appends: every earlier transcript is a prefix of every later one", () => {
    fc.assert(
      fc.property(fc.array(fc.array(step, { maxLength: 8 }), { minLength: 1, maxLength: 3 }), (turns) => {
        const total = turns.reduce((n, t) => n + t.length + 1, 0);
        let previous: string[] = [];
        for (let done = 0; done <= total + 1; done++) {
          const current = buildTranscript(snapshot(turns, done)).messages.map((m) => `${m.role}:${m.id}:${m.text}`);
          expect(current.slice(0, previous.length)).toEqual(previous);
          previous = current;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps running text out of the list until its message completes, and attaches early tool calls to the next message", () => {
    const running: TranscriptTask = {
      id: "rst_1",
      state: "claimed",
      attempt: 1,
      messageId: "msg_1",
      promptChars: 3,
      createdAt: at,
      pinnedRunnerId: null,
      claimDeadline: at,
      fold: foldEvents(
        emptyFold(),
        toEvents([
          { type: "tool", message: "a", text: "" },
          { type: "delta", message: "a", text: "Hel" },
        ]),
      ),
    };
    const during = buildTranscript([running]);
    expect(during.messages.map((m) => m.role)).toEqual(["user"]);
    expect(during.partialText).toBe("Hel");
    const after = buildTranscript([{ ...running, state: "done" }]);
    expect(after.messages[1]).toMatchObject({ role: "assistant", text: "Hel", toolCalls: [{ name: "bash" }] });
    expect(after.finalAssistant).toEqual({ index: 1, text: "Hel" });
  });

  it("folds a turn's events in batches, as they are posted, exactly as all at once", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.array(fc.nat(30), { maxLength: 5 }), (steps, cuts) => {
        const events = toEvents(steps);
        const bounds = [...new Set([0, ...cuts.map((c) => Math.min(c, events.length)), events.length])].sort((a, b) => a - b);
        let folded = emptyFold();
        for (let i = 1; i < bounds.length; i++) folded = foldEvents(folded, events.slice(bounds[i - 1], bounds[i]));
        expect(folded).toEqual(foldEvents(emptyFold(), events));
      }),
      { numRuns: 300 },
    );
  });
});
