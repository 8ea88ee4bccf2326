import type { Queryable } from "@openwork/remote-session-core/internal";
import { fromStates, type TaskMove, type TaskState, toState } from "../task-state.js";

// Task states reach SQL only through these, from the table in task-state.ts. They are written
// into the statement as literals, not sent as parameters: the partial indexes on live rows
// (`where state = 'queued'`, ...) serve a query only when the planner sees the same literal.

const WORD = /^[a-z_]+$/;

function literal(state: TaskState): string {
  if (!WORD.test(state)) throw new Error(`not a task state: ${state}`);
  return `'${state}'`;
}

/** `<column> in ('…')`: the row is in one of `states`. */
export function stateIn(sql: Queryable, states: readonly TaskState[], column = "state") {
  if (!/^(?:[a-z]\.)?state$/.test(column)) throw new Error(`not a state column: ${column}`);
  return sql.unsafe(`${column} in (${states.map(literal).join(", ")})`);
}

/** The guard of a write named `move`: the row is in one of the states the move leaves. */
export function leaving(sql: Queryable, move: TaskMove, column?: string) {
  return stateIn(sql, fromStates(move), column);
}

/** The state a move sets, as a literal (`set state = ${movedTo(tx, "claim")}`). */
export function movedTo(sql: Queryable, move: TaskMove) {
  return sql.unsafe(literal(toState(move)));
}
