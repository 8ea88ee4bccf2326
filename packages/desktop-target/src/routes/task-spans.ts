import { type Context, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { parseTraceparent } from "@openwork/remote-session-core/internal";
import type { RunnerIdentity, TaskRow } from "../store/task-row.js";

/** The context of the call a `traceparent` names (a span of another process), or null for none. */
function parentOf(traceparent: string | null | undefined): Context | null {
  const ids = parseTraceparent(traceparent);
  return ids ? trace.setSpanContext(ROOT_CONTEXT, { ...ids, isRemote: true }) : null;
}

/**
 * A runner's claim, as a span of the trace of the call that queued the task (its stored
 * `trace_parent`), from the claim's time: on whichever replica the claim landed, the prompt's
 * trace shows when a desktop took it. Nothing when the task was queued untraced.
 */
export function recordClaim(tracer: Tracer, task: TaskRow, runner: RunnerIdentity): void {
  const parent = parentOf(task.trace_parent);
  if (!parent) return;
  const attributes = {
    "openwork.task_id": task.id,
    "openwork.task_kind": task.kind,
    "openwork.attempt": task.attempt,
    "openwork.dialect": runner.dialect.name,
  };
  tracer.startSpan("desktop claim", { kind: SpanKind.SERVER, attributes, ...(task.claimed_at ? { startTime: task.claimed_at } : {}) }, parent).end();
}

/**
 * Runs a runner's post about a task (`events`, `complete`) in a span of the trace its
 * `traceparent` header names (the assignment's, sent back by the runner); without one, just runs it.
 */
export async function inRunnerSpan<T>(tracer: Tracer, name: string, request: Request, taskId: string, run: () => Promise<T>): Promise<T> {
  const parent = parentOf(request.headers.get("traceparent"));
  if (!parent) return run();
  return tracer.startActiveSpan(name, { kind: SpanKind.SERVER, attributes: { "openwork.task_id": taskId } }, parent, async (span) => {
    try {
      return await run();
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** What a span of a task needs of its row. */
export type TracedTask = Pick<TaskRow, "id" | "kind" | "trace_parent">;

/**
 * A post of a runner that sends no `traceparent` (OpenWork's desktops: their dialect has no such
 * header), as a span of the trace of the call that queued the task, from `startTime` to now;
 * `refused`: the code the post was refused with (the span is then an error). Nothing when the
 * task was queued untraced.
 */
export function recordTaskPost(tracer: Tracer, name: string, task: TracedTask, startTime: number, refused?: string): void {
  const parent = parentOf(task.trace_parent);
  if (!parent) return;
  const attributes = { "openwork.task_id": task.id, "openwork.task_kind": task.kind, "openwork.dialect": "openwork" };
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, startTime }, parent);
  if (refused) span.setStatus({ code: SpanStatusCode.ERROR, message: refused });
  span.end();
}
