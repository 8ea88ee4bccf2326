import type { Queryable } from "@openwork/remote-session-core/internal";
import { recordTaskPost, type TracedTask } from "../../routes/task-spans.js";
import type { RunnerIdentity } from "../../store/task-row.js";
import type { OpenworkContext } from "./openwork-call.js";

/** The stored trace context of one of the runner's own tasks (a refused post returned no row). */
async function ownTaskTrace(sql: Queryable, runner: RunnerIdentity, taskId: string): Promise<TracedTask | null> {
  const [task] = await sql<TracedTask[]>`
    select id, kind, trace_parent from desktop_task
    where organization_id = ${runner.organizationId} and member_id = ${runner.memberId} and id = ${taskId}`;
  return task ?? null;
}

/** What a refused post answered: its code, whichever layer refused it. */
const refusalOf = (error: unknown) => (error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : "error");

/**
 * An OpenWork desktop's post about one of its tasks (progress, completion), as a span of the
 * prompt's trace: a refused post too, marked failed with its code, so a desktop that keeps
 * failing shows in the trace of the prompt it fails.
 */
export async function tracedPost<T extends TracedTask>(
  ctx: OpenworkContext,
  name: string,
  runner: RunnerIdentity,
  taskId: string,
  post: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  try {
    const task = await post();
    recordTaskPost(ctx.tracer, name, task, started);
    return task;
  } catch (error) {
    const task = await ownTaskTrace(ctx.sql, runner, taskId).catch(() => null);
    if (task) recordTaskPost(ctx.tracer, name, task, started, refusalOf(error));
    throw error;
  }
}
