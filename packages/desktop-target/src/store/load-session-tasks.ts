import { SESSION_LIMITS } from "@openwork/remote-session-core";
import type { Queryable } from "@openwork/remote-session-core/internal";
import type { PendingQuery, Row } from "postgres";
import type { TaskEvent } from "@openwork/runner-protocol/internal";
import type { TranscriptTask } from "../transcript/build-transcript.js";
import { emptyFold, foldEvents, type TaskFold } from "../transcript/task-fold.js";
import type { TaskState } from "../task-state.js";
import type { RowKey } from "./task-row.js";

/**
 * A session's turns (creates and follow-ups) with their folded events, oldest first: the input of the
 * transcript. With `fromTaskId`, only that turn and the ones after it, when it is one of the
 * session's (the first task returned is then that one); else all of them.
 */
export async function loadSessionTasks(sql: Queryable, session: RowKey, fromTaskId?: string): Promise<TranscriptTask[]> {
  const { organizationId, id: sessionId } = session;
  const rows = await sql<
    {
      id: string;
      state: TaskState;
      attempt: number;
      message_id: string | null;
      prompt_chars: number;
      created_at: Date;
      pinned_runner_id: string | null;
      claim_deadline: Date;
      folded: TaskFold | null;
      events: { event: TaskEvent; receivedAt: string }[] | null;
    }[]
  >`
    select t.id, t.state, t.attempt, t.message_id, t.prompt_chars, t.created_at, t.pinned_runner_id, t.claim_deadline,
      -- A read shows no more of a message than a final reply's bound: longer text stays in the database.
      jsonb_set(jsonb_set(t.folded,
        '{done}', ${cutTexts(sql, sql`t.folded->'done'`)}),
        '{open}', ${cutTexts(sql, sql`t.folded->'open'`)}) as folded,
      -- Only a task from before events were folded has its events read (then folded here).
      case when t.folded is null then
        (select jsonb_agg(jsonb_build_object('event', e.event, 'receivedAt', e.received_at) order by e.attempt, e.sequence)
         from desktop_task_event e where e.organization_id = t.organization_id and e.task_id = t.id) end as events
    from desktop_task t
    left join desktop_task a on a.organization_id = t.organization_id and a.id = ${fromTaskId ?? null} and a.session_id = t.session_id
    where t.organization_id = ${organizationId} and t.session_id = ${sessionId} and t.kind in ('remote_session.create', 'remote_session.send')
      and (a.id is null or (t.created_at, t.id) >= (a.created_at, a.id))
    order by t.created_at, t.id`;
  return rows.map((row) => ({
    id: row.id,
    state: row.state,
    attempt: row.attempt,
    messageId: row.message_id,
    promptChars: row.prompt_chars,
    createdAt: row.created_at,
    pinnedRunnerId: row.pinned_runner_id,
    claimDeadline: row.claim_deadline,
    fold:
      row.folded ??
      foldEvents(
        emptyFold(),
        (row.events ?? []).map((e) => ({ event: e.event, receivedAt: new Date(e.receivedAt) })),
      ),
  }));
}

// The most of a message's text a read can show (a final reply's bound), and one more character so
// a cut text still reads as truncated.
const TEXT_READ = SESSION_LIMITS.finalText + 1;

/** A fold's message list with each text cut to what a read can show, in order. */
function cutTexts(sql: Queryable, messages: PendingQuery<Row[]>) {
  return sql`(
    select coalesce(jsonb_agg(m || jsonb_build_object('text', left(m->>'text', ${TEXT_READ})) order by i), '[]'::jsonb)
    from jsonb_array_elements(${messages}) with ordinality as x(m, i))`;
}
