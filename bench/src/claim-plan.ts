// The claim under a full table: claim-next → complete for one runner, with the task table empty,
// holding FINISHED (100 000) finished tasks of the same member, and after retention pruned them;
// each beside the plan PostgreSQL chose for the candidate query and the buffers it touched.
import { pruneLedger } from "@openwork/remote-session-core";
import { type ExplainedPlan, explainPlan, planOutline } from "@openwork/test-postgres/explain-plan";
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway, member } from "./gateway-fixture.js";

const FINISHED = Number(process.env.FINISHED ?? 100_000);
const SAMPLES = Number(process.env.SAMPLES ?? 300);
const LONG_TURNS = Number(process.env.LONG_TURNS ?? 2_000);

const db = await benchDatabase("claim-plan");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const { sql } = fixture;
  const client = await fixture.runnerClient("bench-claim-plan-01");
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();

  /** Queues SAMPLES tasks, then times claim-next and complete for each; with the candidate query's plan. */
  const measure = async (label: string) => {
    for (let i = 0; i < SAMPLES; i++) {
      const created = await fixture.execute("remote-session:create", { target: "desktop", title: `t${i}`, deliverBy });
      if (created.isError) throw new Error(created.content[0]?.text);
    }
    const top = await explainPlan(
      sql,
      `select t.id from desktop_task t
       where t.organization_id = $1 and t.member_id = $2 and t.state = 'queued' and t.claim_deadline > now()
       order by t.created_at limit 1 for update skip locked`,
      [member.organizationId, member.memberId],
    );
    const claims: number[] = [];
    const completes: number[] = [];
    for (;;) {
      const t0 = performance.now();
      const assignment = await client.claimNext();
      if (!assignment) break;
      claims.push(performance.now() - t0);
      const t1 = performance.now();
      await client.complete(assignment.taskId, { attempt: assignment.attempt, status: "done", localSessionId: `ses_${assignment.taskId}` });
      completes.push(performance.now() - t1);
    }
    const [{ count }] = (await sql`select count(*)::int as count from desktop_task`) as unknown as [{ count: number }];
    rows[`${label}: claim-next`] = {
      ...summarize(claims),
      unit: "ms",
      tasksInTable: count,
      plan: planOutline(top.Plan),
      buffers: top.Plan["Shared Hit Blocks"] ?? 0,
      candidateQueryMs: +top["Execution Time"].toFixed(3),
    };
    rows[`${label}: complete`] = { ...summarize(completes), unit: "ms" };
  };

  await measure("empty table (baseline)");
  // Finished work of the same member, as months of use leave it (one session per task).
  await sql`
    insert into remote_session (id, organization_id, user_id, target, title, state, last_activity_at)
    select 'rs_' || lpad(to_hex(i), 26, '0'), ${member.organizationId}, ${member.userId!}, 'desktop', 'old', 'idle', now() - interval '40 days'
    from generate_series(1, ${FINISHED}) as i`;
  await sql`
    insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline, created_at, finished_at)
    select 'rst_' || lpad(to_hex(i), 26, '0'), ${member.organizationId}, ${member.memberId}, 'rs_' || lpad(to_hex(i), 26, '0'), 'remote_session.create', 'done', 'old', 1, '{}',
           now() - interval '40 days', now() - interval '40 days', now() - interval '40 days'
    from generate_series(1, ${FINISHED}) as i`;
  await sql`analyze desktop_task`;
  await measure(`${FINISHED.toLocaleString("en")} finished tasks of the same member`);
  while ((await pruneLedger(sql)).sessions > 0) {}
  await sql`analyze desktop_task`;
  await measure("after retention pruned them");

  // A long session (its create, then follow-ups), all finished. The ordering check of a follow-up
  // in it: is an earlier turn of it still open?
  // Measured without the partial index on open turns (the baseline), then with it.
  await sql`
    insert into remote_session (id, organization_id, user_id, target, title, state)
    values ('rs_long0000000000000000000000', ${member.organizationId}, ${member.userId!}, 'desktop', 'long', 'idle')`;
  await sql`
    insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline, created_at)
    select 'rst_' || lpad(to_hex(${FINISHED} + i), 26, '0'), ${member.organizationId}, ${member.memberId}, 'rs_long0000000000000000000000',
           case when i = 1 then 'remote_session.create' else 'remote_session.send' end, 'done', 'turn', 1, '{}', now(), now() - make_interval(secs => ${LONG_TURNS} - i)
    from generate_series(1, ${LONG_TURNS}) as i`;
  await sql`analyze desktop_task`;
  /** EXPLAIN ANALYZE's execution time of `query` over SAMPLES runs, with the indexes its plan used. */
  const timed = async (label: string, query: string) => {
    const samples: number[] = [];
    let plan = "";
    for (let i = 0; i < SAMPLES; i++) {
      const [row] = await sql.unsafe(`explain (analyze, format json) ${query}`);
      const top = (row as unknown as { "QUERY PLAN": ExplainedPlan[] })["QUERY PLAN"][0]!;
      samples.push(top["Execution Time"]);
      plan = planOutline(top.Plan);
    }
    rows[label] = { ...summarize(samples), unit: "ms", plan };
  };
  const orderingCheck = (label: string) =>
    timed(
      `ordering check, ${LONG_TURNS.toLocaleString("en")} finished turns in the session: ${label}`,
      `select exists (select 1 from desktop_task e
         where e.session_id = 'rs_long0000000000000000000000' and e.created_at < now()
           and e.state in ('queued', 'claimed') and e.kind in ('remote_session.create', 'remote_session.send'))`,
    );
  await sql`drop index desktop_task_open_turns`;
  await orderingCheck("without the open-turns index (baseline)");
  await sql`create index desktop_task_open_turns on desktop_task (session_id, created_at)
    where state in ('queued', 'claimed') and kind in ('remote_session.create', 'remote_session.send')`;
  await sql`analyze desktop_task`;
  await orderingCheck("with it");

  // A completion's read of its session's turns (desktop_lock_session), same long session: every
  // turn, as the function read them before migration 0019 (the baseline, its body copied here),
  // against the turns the derivation needs.
  await sql.unsafe(`create function bench_every_turn(p_organization_id text, p_session_id text) returns jsonb
    language plpgsql stable as $$
    begin
      return (select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'state', t.state, 'kind', t.kind,
          'claimed_via', t.claimed_via, 'progress', t.progress->>'status') order by t.created_at desc, t.id desc), '[]')
        from desktop_task t where t.organization_id = p_organization_id and t.session_id = p_session_id
          and t.kind in ('remote_session.create', 'remote_session.send'));
    end $$`);
  // And a session of one turn, its create claimed: the common completion.
  await sql`
    insert into remote_session (id, organization_id, user_id, target, title, state)
    values ('rs_short000000000000000000000', ${member.organizationId}, ${member.userId!}, 'desktop', 'short', 'running')`;
  await sql`
    insert into desktop_task (id, organization_id, member_id, session_id, kind, state, title, required_protocol, required_capabilities, claim_deadline)
    values ('rst_short000000000000000000000', ${member.organizationId}, ${member.memberId}, 'rs_short000000000000000000000',
            'remote_session.create', 'claimed', 'turn', 1, '{}', now() + interval '1 hour')`;
  const sessions = [
    [`${LONG_TURNS.toLocaleString("en")} finished turns in the session`, "rs_long0000000000000000000000"],
    ["a session of one claimed turn", "rs_short000000000000000000000"],
  ] as const;
  for (const [session, id] of sessions) {
    const turnsRead = (label: string, fn: string) =>
      timed(`a completion's read of the turns, ${session}: ${label}`, `select ${fn}('${member.organizationId}', '${id}')`);
    for (let round = 0; round < 2; round++) {
      await turnsRead("every turn (before 0019, baseline)", "bench_every_turn");
      await turnsRead("the turns the derivation reads (0019)", "desktop_session_turns");
    }
  }
  await fixture.close();
} finally {
  await db.stop();
}
await report("claim-plan", db.server, rows, [
  `One runner (protocol 3) claims ${SAMPLES} store-and-forward tasks one by one (claim-next, then complete) over HTTP. The plan is the candidate query's (EXPLAIN ANALYZE, the member's queued tasks oldest first, FOR UPDATE SKIP LOCKED); buffers = shared blocks hit.`,
  "The finished tasks are 40 days quiet, so pruneLedger (the retention pass) deletes them with their sessions.",
  `The ordering check is eligibility's "no earlier turn of this session still open" for a session with ${LONG_TURNS} finished turns (EXPLAIN ANALYZE execution time), without and with the partial index on open turns (migration 0008), same run.`,
  "The turns' read is desktop_session_turns, which a completion runs under its session's lock, in a session of 2 000 finished turns and in one of a single claimed turn: every turn of the session (the body before migration 0019) against only the open turns, the newest and the create; two alternating rounds, the second round's figures kept.",
]);
process.exit(0);
