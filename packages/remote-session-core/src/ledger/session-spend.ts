/**
 * What a session spent, as its engine reported it. `usage: "unreported"` until a step reported
 * any (an engine or runner that reports nothing reads so, not as a spend of zero).
 */
export interface Spend {
  /** Tokens in and out together: what a token budget counts. */
  tokens: number;
  tokensIn: number;
  tokensOut: number;
  /** In US dollars; null while no step was priced (an engine without prices). */
  costUsd: number | null;
  /** Wall time of the session's running turns. */
  runningMs: number;
  usage: "reported" | "unreported";
}

/** What one reported step (or several) adds to a session's spend; tokens mark its usage reported. */
export interface SpendDelta {
  tokensIn?: number;
  tokensOut?: number;
  /** Micro-dollars; absent when the step was not priced. */
  costMicros?: number;
  runningMs?: number;
}

/**
 * A session's spend in total, as a target's engine keeps it (a cloud worker's messages): the core
 * records it over what it had, never below (`reported`: some step said what it used).
 */
export interface ObservedSpend {
  tokensIn: number;
  tokensOut: number;
  /** Micro-dollars; absent when no step was priced. */
  costMicros?: number;
  runningMs: number;
  reported: boolean;
}

/**
 * Whether `observed` says more than `recorded` holds, so it is worth a write. Running time alone
 * counts once it grew by more than `timeSlackMs`: a running turn's time grows at every look, and
 * its end is recorded exactly (the look after it passes no slack).
 */
export function spendGrew(observed: ObservedSpend, recorded: Spend, timeSlackMs = 0): boolean {
  const recordedMicros = recorded.costUsd === null ? null : Math.round(recorded.costUsd * 1_000_000);
  return (
    observed.tokensIn > recorded.tokensIn ||
    observed.tokensOut > recorded.tokensOut ||
    observed.runningMs > recorded.runningMs + timeSlackMs ||
    (observed.costMicros !== undefined && (recordedMicros === null || observed.costMicros > recordedMicros)) ||
    (observed.reported && recorded.usage === "unreported")
  );
}

/** The spend columns of a session row. */
export interface SpendColumns {
  spent_tokens_in: string | number;
  spent_tokens_out: string | number;
  spent_cost_micros: string | number | null;
  spent_running_ms: string | number;
  usage_reported: boolean;
}

/** A row's spend (bigint columns arrive as strings). */
export function spendOf(row: SpendColumns): Spend {
  const tokensIn = Number(row.spent_tokens_in);
  const tokensOut = Number(row.spent_tokens_out);
  return {
    tokens: tokensIn + tokensOut,
    tokensIn,
    tokensOut,
    costUsd: row.spent_cost_micros === null ? null : Number(row.spent_cost_micros) / 1_000_000,
    runningMs: Number(row.spent_running_ms),
    usage: row.usage_reported ? "reported" : "unreported",
  };
}

/** The spend of several sessions together (a tree): reported when any of them reported. */
export function sumSpend(spends: readonly Spend[]): Spend {
  const priced = spends.filter((spend) => spend.costUsd !== null);
  const tokensIn = spends.reduce((sum, spend) => sum + spend.tokensIn, 0);
  const tokensOut = spends.reduce((sum, spend) => sum + spend.tokensOut, 0);
  return {
    tokens: tokensIn + tokensOut,
    tokensIn,
    tokensOut,
    // Summed in micro-dollars, so the total is what the rows hold, without float drift.
    costUsd: priced.length === 0 ? null : priced.reduce((sum, spend) => sum + Math.round(spend.costUsd! * 1_000_000), 0) / 1_000_000,
    runningMs: spends.reduce((sum, spend) => sum + spend.runningMs, 0),
    usage: spends.some((spend) => spend.usage === "reported") ? "reported" : "unreported",
  };
}
