import type { PendingInput, Queryable } from "@openwork/remote-session-core/internal";
import type { TranscriptTask } from "../transcript/build-transcript.js";
import { openAsksOf, pendingInputOf } from "../transcript/pending-input-of.js";
import type { FoldedRequest } from "../transcript/task-fold.js";
import type { RowKey } from "./task-row.js";
import { leaving, stateIn } from "./task-state-sql.js";

/**
 * What the session's running turn still asks the human: the latest of its open requests that no
 * answer reached yet. The turn reports a request resolved on its own stream, which may post
 * after the answer's completion: until then, the completed answer is what says it was answered.
 */
export async function stillAsked(sql: Queryable, session: RowKey, tasks: TranscriptTask[]): Promise<PendingInput | undefined> {
  const open = await unanswered(sql, session, openAsksOf(tasks));
  return open.length > 0 ? pendingInputOf(open.at(-1)!) : undefined;
}

/**
 * Whether the answer to `requestId` a runner just delivered leaves the session's running turn
 * asking nothing more: then the session runs on, moved with the answer's completion (the session
 * is locked) rather than when the turn's own `input.resolved` arrives.
 */
export async function answerEndsAsks(tx: Queryable, session: RowKey, requestId: string): Promise<boolean> {
  const [turn] = await tx<{ asked: FoldedRequest[] | null }[]>`
    select folded->'asked' as asked from desktop_task
    where organization_id = ${session.organizationId} and session_id = ${session.id}
      and kind in ('remote_session.create', 'remote_session.send') and ${leaving(tx, "renew")}
    order by created_at desc, id desc limit 1`;
  const asks = turn?.asked ?? [];
  if (!asks.some((ask) => ask.requestId === requestId)) return false;
  return (
    (
      await unanswered(
        tx,
        session,
        asks.filter((ask) => ask.requestId !== requestId),
      )
    ).length === 0
  );
}

/**
 * The requests among `asks` no answer reached: none of the session's respond tasks created since
 * the request was asked completed for it (an id a runner reuses for a later ask is a new ask).
 */
async function unanswered(sql: Queryable, session: RowKey, asks: FoldedRequest[]): Promise<FoldedRequest[]> {
  if (asks.length === 0) return asks;
  const rows = await sql<{ request_id: string; at: Date }[]>`
    select input->>'requestId' as request_id, created_at as at from desktop_task
    where organization_id = ${session.organizationId} and session_id = ${session.id}
      and kind = 'remote_session.respond' and input->>'requestId' in ${sql(asks.map((ask) => ask.requestId))} and ${stateIn(sql, ["done"])}`;
  return asks.filter((ask) => !rows.some((row) => row.request_id === ask.requestId && row.at.getTime() >= Date.parse(ask.askedAt)));
}
