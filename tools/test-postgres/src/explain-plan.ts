import type { Sql } from "postgres";

/** A node of EXPLAIN's JSON plan: the fields tests and benches read. */
export interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Shared Hit Blocks"?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN (ANALYZE, BUFFERS)'s answer for a statement: its plan and its execution time, in ms. */
export interface ExplainedPlan {
  Plan: PlanNode;
  "Execution Time": number;
}

/**
 * Runs `text` (with `parameters` as $1…) under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) and answers
 * its plan. On a transaction's handle (`sql.begin`'s) it plans under that transaction's settings
 * (`set local plan_cache_mode`, say).
 */
export async function explainPlan(sql: Pick<Sql, "unsafe">, text: string, parameters: readonly (string | number)[] = []): Promise<ExplainedPlan> {
  const [row] = await sql.unsafe(`explain (analyze, buffers, format json) ${text}`, [...parameters]);
  return (row as unknown as { "QUERY PLAN": ExplainedPlan[] })["QUERY PLAN"][0]!;
}

/** The plan's nodes, outermost first. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/** The plan in one line, outermost first: `Limit > Index Scan (desktop_task_queued)`. */
export const planOutline = (node: PlanNode): string =>
  planNodes(node)
    .map((n) => (n["Index Name"] ? `${n["Node Type"]} (${n["Index Name"]})` : n["Node Type"]))
    .join(" > ");
