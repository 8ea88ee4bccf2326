import type { SessionState } from "../session-state.js";
import type { Target, TargetCall } from "../target.js";

/**
 * A target for the ledger's tests: its sessions start running at once, and it keeps what it was
 * asked to make, which turns it stopped (they then read idle) and which prompts it was sent.
 */
export function runningTarget() {
  const made: string[] = [];
  const stopped: string[] = [];
  const prompts: string[] = [];
  const reads = { count: 0 };
  let state: SessionState = "running";
  const target = {
    name: "desktop",
    label: "Desktop",
    availability: async () => ({ available: true }),
    create: async (_call: TargetCall, input: { sessionId: string; bind: (b: object) => Promise<void> }) => {
      await input.bind({ targetSessionId: `local_${input.sessionId}` });
      made.push(input.sessionId);
      return { state: "running" as const, targetSessionId: `local_${input.sessionId}` };
    },
    read: async (_call: TargetCall, session: { id: string }) => {
      reads.count++;
      return {
        sessionId: session.id,
        target: "desktop",
        state,
        title: "t",
        messages: [],
        cursor: "c",
        hasMore: false,
      };
    },
    stop: async (_call: TargetCall, session: { id: string }) => {
      stopped.push(session.id);
      state = "idle";
      return { sessionId: session.id, stopped: true };
    },
    send: async (_call: TargetCall, session: { id: string }, input: { prompt: string }) => {
      prompts.push(input.prompt);
      return { sessionId: session.id, messageId: "msg_1", state: "accepted", alreadyPresent: false, sessionState: "running" };
    },
  } as unknown as Target;
  return { target, made, stopped, prompts, reads };
}
