// The expiry sweep with a long history: 200 000 finished tasks (and their sessions) beside 200
// live ones. The statement that finds expired queued tasks as it was (`claim_deadline <= now() or
// deliver_by <= now()`, unbounded: baseline) and as it is (`claim_deadline <= now()` from the
// partial index on queued tasks, in batches), EXPLAIN ANALYZE, same run, same data.
import { migrateDesktopTarget } from "@openwork/desktop-target";
import { explainPlan, planOutline } from "@openwork/test-postgres/explain-plan";
import postgres from "postgres";
import { benchDatabase, report, summarize } from "./harness.js";

const FINISHED = Number(process.env.FINISHED ?? 200_000);
const SAMPLES = Number(process.env.SAMPLES ?? 50);
const db = await benchDatabase("sweep_plan");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  await migrateDesktopTarget(sql);
  await sql`
    insert into remote_session (id, organization_id, user_id, target, title, state)
    select 'rs_' || lpad(i::text, 26, '0'), 'org_sweep', 'user_sweep', 'desktop', 'old', 'idle' from generate_series(1, ${FINISHED + 200}) as i`;
  await sql`
    insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline, deliver_by, finished_at)
    select 'rst_' || lpad(i::text, 26, '0'), 'org_sweep', 'mem_sweep', 'rs_' || lpad(i::text, 26, '0'), 'remote_session.create',
      case when i <= ${FINISHED} then 'done' else 'queued' end, 'old', 3, '{}',
      now() + interval '1 hour', case when i % 2 = 0 then now() + interval '1 hour' end, case when i <= ${FINISHED} then now() end
    from generate_series(1, ${FINISHED + 200}) as i`;
  await sql`vacuum analyze desktop_task`;
  const statements = {
    "as it was: claim_deadline or deliver_by, unbounded (baseline)": `select id from desktop_task where state = 'queued' and (claim_deadline <= now() or deliver_by <= now()) for update`,
    "as it is: claim_deadline from the partial index, batches of 500": `select id from desktop_task where state = 'queued' and claim_deadline <= now() order by claim_deadline limit 500 for update skip locked`,
  };
  for (const [label, text] of Object.entries(statements)) {
    const times: number[] = [];
    let plan = "";
    let buffers = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const top = await explainPlan(sql, text);
      times.push(top["Execution Time"]);
      plan = planOutline(top.Plan);
      buffers = top.Plan["Shared Hit Blocks"] ?? 0;
    }
    rows[label] = { ...summarize(times), unit: "ms", plan, buffers, tasksInTable: FINISHED + 200 };
  }
  await sql.end();
} finally {
  await db.stop();
}
await report("sweep-plan", db.server, rows, [
  `${FINISHED.toLocaleString("en")} finished tasks and 200 queued ones (none due), EXPLAIN ANALYZE of the candidate query each sweep (every 2 s on every replica) runs, ${SAMPLES} times each.`,
]);
process.exit(0);
