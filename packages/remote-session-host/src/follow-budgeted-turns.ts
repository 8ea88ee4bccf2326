import { createSessionLedger, errorFacts, type LedgerSession, type Logger, newReferenceId, type Target } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";

// The most turns one start follows again.
const MOST_TURNS = 1_000;
// Followed at once: each resolves its member's worker and opens the worker's event stream.
const AT_ONCE = 8;

/**
 * Follows again, after a start, the budgeted turns `target` checks as their steps end (its
 * `followRunning`): their followers lived in a process that stopped, and a turn nobody reads
 * would otherwise run past its budget until its next read; those active within `followMs` (a
 * follower that had gone on longer would have stopped by itself). Every replica that starts does it;
 * the pause opens once, whoever sees the spend first. A few at a time, until `signal` (the host
 * closing) aborts. Best effort: what fails is logged. Answers how many it follows.
 */
export async function followBudgetedTurns(sql: Queryable, target: Target, followMs: number, logger: Logger, signal: AbortSignal): Promise<number> {
  const followRunning = target.followRunning?.bind(target);
  if (!followRunning) return 0;
  let followed = 0;
  const followOne = async (session: LedgerSession) => {
    const referenceId = newReferenceId();
    try {
      if (await followRunning(session, referenceId)) followed++;
    } catch (error) {
      logger.info("remote sessions: a budgeted turn was not followed again (its next read checks it)", {
        sessionId: session.id,
        referenceId,
        error: errorFacts(error),
      });
    }
  };
  try {
    const turns = await createSessionLedger(sql).runningBudgeted(target.name, followMs, MOST_TURNS);
    for (let i = 0; i < turns.length && !signal.aborted; i += AT_ONCE) await Promise.all(turns.slice(i, i + AT_ONCE).map(followOne));
    if (followed > 0) logger.info("remote sessions: budgeted turns followed again", { target: target.name, followed });
  } catch (error) {
    logger.warn("remote sessions: the budgeted turns to follow again could not be listed", { target: target.name, error: errorFacts(error) });
  }
  return followed;
}
