import { useTestDatabase } from "@openwork/test-postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { createSessionLedger } from "../ledger/session-ledger.js";
import type { LedgerSession } from "../ledger/ledger-session.js";
import { migrate } from "../migrate.js";
import type { PendingInput } from "../pending-input.js";
import { createRemoteSessions } from "../sessions.js";
import type { SessionState } from "../session-state.js";
import type { Target, TargetCall } from "../target.js";
import { decodeCursor, observationOf, observedIn } from "./cursor.js";
import { sliceTranscript } from "./slice-transcript.js";

const db = useTestDatabase();
const call: TargetCall = { organizationId: "org_wait", userId: "user_wait", memberId: "mem_wait", referenceId: "ref_wait" };
const permission: PendingInput = { kind: "permission", id: "per_1", title: "bash", detail: "rm -rf build" };

/** A target that, as the real ones do outside a running turn, answers every read at once. */
function answeringAtOnce(view: { state: SessionState; pending?: PendingInput }) {
  const looks: number[] = [];
  const target = {
    name: "cloud",
    read: async (_call, session, input) => {
      looks.push(input.waitMs);
      const slice = sliceTranscript({
        session,
        target: "cloud",
        state: view.state,
        transcript: { messages: [], partialText: null, finalAssistant: null },
        position: decodeCursor(session.id, input.cursor),
        cursor: input.cursor,
        limit: input.limit,
      });
      return view.pending ? { ...slice, pending: view.pending } : slice;
    },
    stop: async (_call, session) => {
      view.state = "stopped";
      delete view.pending;
      return { sessionId: session.id, stopped: true, sessionState: "stopped" as const };
    },
  } as Pick<Target, "read" | "stop"> as Target;
  return { target, looks };
}

let ledger: ReturnType<typeof createSessionLedger>;
beforeAll(async () => {
  await migrate(db.current.sql);
  ledger = createSessionLedger(db.current.sql);
});
const waitingSession = async (): Promise<LedgerSession> => {
  const inserted = await ledger.insert(call, { target: "cloud", title: "asks", state: "queued" });
  return (await ledger.update({ organizationId: call.organizationId, id: inserted.id }, { state: "waiting_input", expect: "queued" }))!;
};

describe("a read that waits, on a session waiting for input", () => {
  it("answers at once when the caller has not seen that state yet, and says in its cursor what it showed", async () => {
    const sessions = createRemoteSessions(ledger);
    const { target, looks } = answeringAtOnce({ state: "waiting_input", pending: permission });
    const session = await waitingSession();
    const read = await sessions.read(call, target, session, { limit: 20, waitMs: 20_000 });
    expect(read).toMatchObject({ state: "waiting_input", pending: { id: "per_1" } });
    expect(looks).toEqual([20_000]);
    expect(observedIn(session.id, read.cursor)).toBe(observationOf(read));
    // The target still reads its own position from the cursor.
    expect(decodeCursor(session.id, read.cursor)).toBe(0);
  });

  it("does not return on the state the caller already saw: it waits for a change after their cursor", async () => {
    const sessions = createRemoteSessions(ledger);
    const view: { state: SessionState; pending?: PendingInput } = { state: "waiting_input", pending: permission };
    const { target, looks } = answeringAtOnce(view);
    const session = await waitingSession();
    const seen = await sessions.read(call, target, session, { limit: 20, waitMs: 0 });
    // Far longer than the test may take: only the change below ends this read.
    const waiting = sessions.read(call, target, session, { limit: 20, waitMs: 25_000, cursor: seen.cursor });
    await expect.poll(() => looks.length).toBe(2);
    const stopped = await sessions.stop(call, target, session);
    expect(stopped).toEqual({ sessionId: session.id, stopped: true });
    expect(await waiting).toMatchObject({ state: "stopped" });
    expect(looks).toEqual([0, 25_000, 0]);
  });

  it("looks again only now and then while nothing changes, and returns what it saw at the deadline", async () => {
    const sessions = createRemoteSessions(ledger);
    const { target, looks } = answeringAtOnce({ state: "waiting_input", pending: permission });
    const session = await waitingSession();
    const seen = await sessions.read(call, target, session, { limit: 20, waitMs: 0 });
    const read = await sessions.read(call, target, session, { limit: 20, waitMs: 1_500, cursor: seen.cursor });
    expect(read).toMatchObject({ state: "waiting_input", pending: { id: "per_1" } });
    // Beside the caller's first read: a look that found nothing new, one after 1 s, one at the
    // deadline — it looked again rather than answer at once, and never in a busy loop.
    expect(looks.slice(1, 2)).toEqual([1_500]);
    expect(looks.length).toBeGreaterThanOrEqual(3);
    expect(looks.length).toBeLessThanOrEqual(4);
    // Another request waiting is news, even in the same state.
    const { target: other, looks: otherLooks } = answeringAtOnce({ state: "waiting_input", pending: { ...permission, id: "per_2" } });
    expect(await sessions.read(call, other, session, { limit: 20, waitMs: 20_000, cursor: read.cursor })).toMatchObject({ pending: { id: "per_2" } });
    expect(otherLooks).toHaveLength(1);
  });
});
