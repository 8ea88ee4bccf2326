// Retention's cost: one bounded pass of pruneLedger (500 sessions with their tasks and events)
// over a ledger holding many expired sessions, and another member's `list` while passes run,
// beside the same `list` with no pruning, in the same run.
import { pruneLedger } from "@openwork/remote-session-core";
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const OLD = Number(process.env.OLD_SESSIONS ?? 20_000);
const SAMPLES = Number(process.env.SAMPLES ?? 200);

const db = await benchDatabase("retention");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const { sql } = fixture;
  // Expired sessions, each with one finished task and two events, 40 days quiet.
  await sql`
    insert into remote_session (id, organization_id, user_id, target, title, state, last_activity_at)
    select 'rs_' || lpad(to_hex(i), 26, '0'), 'org_old', 'user_old', 'desktop', 'old', 'idle', now() - interval '40 days'
    from generate_series(1, ${OLD}) as i`;
  await sql`
    insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline)
    select 'rst_' || lpad(to_hex(i), 26, '0'), 'org_old', 'mem_old', 'rs_' || lpad(to_hex(i), 26, '0'), 'remote_session.create', 'done', 'old', 1, '{}', now()
    from generate_series(1, ${OLD}) as i`;
  await sql`
    insert into desktop_task_event (task_id, attempt, sequence, type, event)
    select 'rst_' || lpad(to_hex(i), 26, '0'), 1, s, 'assistant.final', '{"type":"assistant.final"}'::jsonb
    from generate_series(1, ${OLD}) as i, generate_series(1, 2) as s`;
  const mcp = await fixture.mcpClient();
  const list = async () => {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      await mcp.callTool({ name: "execute_capability", arguments: { name: "remote-session:list", body: {} } });
      samples.push(performance.now() - t0);
    }
    return summarize(samples);
  };
  rows["another member's list, no pruning (baseline)"] = { ...(await list()), unit: "ms" };
  const passes: number[] = [];
  let pruning = true;
  const prune = (async () => {
    while (pruning) {
      const t0 = performance.now();
      const { sessions } = await pruneLedger(sql);
      passes.push(performance.now() - t0);
      if (sessions === 0) break;
    }
  })();
  rows["another member's list while passes run"] = { ...(await list()), unit: "ms" };
  pruning = false;
  await prune;
  rows["one retention pass (≤ 500 sessions + tasks + events)"] = { ...summarize(passes), unit: "ms", sessionsPerPass: 500 };
  await mcp.close();
  await fixture.close();
} finally {
  await db.stop();
}
await report("retention", db.server, rows, [
  `${OLD} sessions 40 days quiet, each with a finished task and two events; pruneLedger deletes at most 500 per pass (skip locked).`,
]);
process.exit(0);
