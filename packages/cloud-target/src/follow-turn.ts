import { errorFacts, type Logger, type TargetCall } from "@openwork/remote-session-core";
import type { ObservedSpend } from "@openwork/remote-session-core";
import type { ObservedState, SessionState } from "@openwork/remote-session-core/internal";
import type { CloudSessionView } from "./turn-state.js";
import { withUnseenSteps } from "./cloud-spend.js";
import type { SessionWatch } from "./worker-events.js";

/** What the target tells its host of a turn it follows: `onObserved` of the cloud target's options. */
export type OnObserved = (call: TargetCall, sessionId: string, observed: ObservedState) => Promise<unknown>;

/** How often, and how long apart, a state the ledger refused is recorded again (the call's own record may land after it). */
const RECORD_TRIES = 20;
const RECORD_RETRY_MS = 50;

/** A turn the target started (create, send, respond) and follows whether or not anyone reads it. */
export interface FollowedTurn {
  /** The call that started it, without its signal: the follow outlives the request. */
  call: TargetCall;
  sessionId: string;
  /** The states the ledger may hold for it now: the one before the call, and the one the call records. */
  from: readonly SessionState[];
  /** When its prompt went (ms): a turn with no busy status past the grace is looked at. */
  promptAt: number;
  /** Its spend is checked against a budget: it is looked at after each step, and what it spent told. */
  budgeted: boolean;
  /** One look at the session on its worker: its state, what its messages say it spent, and the steps that counts. */
  look: () => Promise<Look>;
  onObserved: OnObserved;
  /** Ends the follow: the target was closed. */
  signal: AbortSignal;
}

/** What one look found. */
export interface Look {
  view: CloudSessionView;
  spend?: ObservedSpend | undefined;
  /** The steps `spend` counts, by part id (null: it cannot say). */
  counted?: ReadonlySet<string> | null;
}

/** What a budgeted turn's follower last knew it spent: a look's totals, and the steps they count. */
type Spent = { spend: ObservedSpend; counted: ReadonlySet<string> } | null;

// The longest one wait of the per-step loop: what it leaves behind when the follow ends.
const STEP_WAIT_MS = 5_000;

const NOTHING_SPENT: ObservedSpend = { tokensIn: 0, tokensOut: 0, runningMs: 0, reported: false };

// A turn is over in these: nothing more to follow.
const TURN_OVER: ReadonlySet<SessionState> = new Set(["idle", "failed", "stopped"]);

/**
 * Follows a turn until `until`: looks at the session when its stream says the turn ended, or a
 * request was asked or resolved, or no busy status came within `graceMs` of the prompt; each state
 * a look shows that differs from the last goes to `onObserved`, until the turn is over. Without a
 * live stream it looks every `graceMs`. A look that fails is logged and tried again later. Ends
 * early when `turn.signal` aborts. A budgeted turn is looked at once at the start, so that at
 * each step's end what it spent is told at once — the last look's totals and the steps the
 * stream heard since (`withUnseenSteps`) — and a budget it reaches stops it before the look that
 * follows comes back (a look reads the whole message list through the worker).
 */
export async function followTurn(watch: SessionWatch, turn: FollowedTurn, until: number, graceMs: number, logger: Logger): Promise<void> {
  if (!turn.budgeted) return lookUntilOver(watch, turn, until, graceMs, logger, { last: null });
  // A budgeted turn's steps are told as they end, beside the looks (one may be under way then).
  const spent = { last: await firstSpend(turn, logger) };
  const followed = new AbortController();
  void tellEachStep(watch, turn, spent, until, AbortSignal.any([turn.signal, followed.signal]), logger);
  try {
    await lookUntilOver(watch, turn, until, graceMs, logger, spent);
  } finally {
    followed.abort();
  }
}

/** The looks of `followTurn`; each of a budgeted turn keeps what it found in `spent`. */
async function lookUntilOver(watch: SessionWatch, turn: FollowedTurn, until: number, graceMs: number, logger: Logger, spent: { last: Spent }): Promise<void> {
  let from = turn.from;
  // What the ledger holds once the call's own record lands: a look that shows anything else is news,
  // even a state the session was in before the call (a follow-up's idle after an idle turn).
  let known = turn.from.at(-1);
  let tries = RECORD_TRIES;
  let busy = false;
  let requests = watch.signals().requests;
  let steps = watch.signals().steps;
  while (Date.now() < until && !turn.signal.aborted) {
    const signals = watch.signals();
    const ended = signals.error !== null || (busy && signals.status === null);
    busy ||= signals.status !== null;
    const asked = signals.requests !== requests;
    requests = signals.requests;
    const stepped = turn.budgeted && signals.steps !== steps;
    steps = signals.steps;
    const silent = !busy && Date.now() - turn.promptAt > graceMs;
    if (ended || asked || silent || stepped || !watch.live()) {
      try {
        const { view, spend, counted } = await turn.look();
        if (turn.budgeted && spend && counted) spent.last = { spend, counted };
        const told = view.state !== known;
        if (told) {
          const news = from.filter((state) => state !== view.state);
          const observed = { from: news, state: view.state, ...(view.lastError ? { lastError: view.lastError } : {}), ...(spend ? { spend } : {}) };
          const moved = await turn.onObserved(turn.call, turn.sessionId, observed);
          // A turn over within ms of its prompt can be seen before the call records its own state
          // (`running`, after the prompt went): the row refused it, so it is looked at again soon.
          if (moved === false && from.includes(view.state) && tries-- > 0) {
            await delay(RECORD_RETRY_MS, turn.signal);
            continue;
          }
          from = [view.state];
          known = view.state;
        }
        // Over with no news of its state (a reader recorded it), or a budgeted step: what it spent is news.
        if (!told && spend && (stepped || TURN_OVER.has(view.state))) await turn.onObserved(turn.call, turn.sessionId, { from: [], state: view.state, spend });
        if (TURN_OVER.has(view.state)) return;
      } catch (error) {
        logger.warn("cloud target: a followed turn could not be looked at", {
          sessionId: turn.sessionId,
          referenceId: turn.call.referenceId,
          error: errorFacts(error),
        });
      }
    }
    const wait = Math.min(until - Date.now(), graceMs);
    await (watch.live() ? watch.changed(watch.version(), wait) : delay(wait, turn.signal));
  }
}

const delay = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** A budgeted turn's first look: what it spent before its steps (nothing known when the look fails). */
async function firstSpend(turn: FollowedTurn, logger: Logger): Promise<Spent> {
  try {
    const { spend, counted } = await turn.look();
    return counted ? { spend: spend ?? NOTHING_SPENT, counted } : null;
  } catch (error) {
    logger.warn("cloud target: a budgeted turn could not be looked at", {
      sessionId: turn.sessionId,
      referenceId: turn.call.referenceId,
      error: errorFacts(error),
    });
    return null;
  }
}

/**
 * Tells, as each step of a budgeted turn ends, what the turn spent at least: the last look's
 * totals and the steps the stream heard since (the looks tell it exactly, later). Ends with the
 * follow (its turn over, its window past, its target closed).
 */
async function tellEachStep(
  watch: SessionWatch,
  turn: FollowedTurn,
  spent: { last: Spent },
  until: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  let steps = watch.signals().steps;
  let told = 0;
  const ended = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  while (Date.now() < until && !signal.aborted) {
    const signals = watch.signals();
    if (signals.steps !== steps && spent.last) {
      steps = signals.steps;
      const spend = withUnseenSteps(spent.last.spend, spent.last.counted, signals.stepSpend ?? new Map());
      // Tokens and micro-dollars only grow: a larger sum is a step this has not told.
      const grown = spend.tokensIn + spend.tokensOut + (spend.costMicros ?? 0);
      if (grown > told) {
        told = grown;
        await turn.onObserved(turn.call, turn.sessionId, { from: [], state: "running", spend }).catch((error: unknown) => {
          logger.warn("cloud target: a step's spend was not told", { sessionId: turn.sessionId, referenceId: turn.call.referenceId, error: errorFacts(error) });
        });
      }
    }
    // A stream that is down (or not up yet) is waited for: the looks meanwhile poll. Each wait is
    // short, so the one the follow's end leaves behind lingers no longer.
    const wait = Math.min(until - Date.now(), STEP_WAIT_MS);
    await (watch.live() ? Promise.race([watch.changed(watch.version(), wait), ended]) : delay(wait, signal));
  }
}
