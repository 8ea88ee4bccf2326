// What one read of a long desktop session costs, at its end: with the cursor a read returns
// (it names the turn holding its next message, so only that turn's events are loaded) and with
// the same cursor stripped of that anchor (every turn's events loaded: the baseline, what every
// read and every wake of a waiting read did before). Same run, same session, through the capability.
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const SIZES = (process.env.TURNS ?? "50,500,2000").split(",").map(Number);
const READS = Number(process.env.READS ?? 200);
const EVENTS = 10;
const db = await benchDatabase("read_cost");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const runner = await fixture.runnerClient("bench-read-cost-01");
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  for (const turns of SIZES) {
    // One real turn through the gateway, then its task and events copied into turns - 1 more.
    const created = await fixture.execute("remote-session:create", { target: "desktop", prompt: "turn", deliverBy });
    const sessionId = created.structuredContent.sessionId as string;
    const task = (await runner.claimNext())!;
    const events = Array.from({ length: EVENTS }, (_, i) =>
      i === EVENTS - 1
        ? { sequence: i + 1, type: "assistant.final" as const, payload: { messageId: "m1", text: "done ".repeat(40) } }
        : { sequence: i + 1, type: "assistant.delta" as const, payload: { messageId: "m1", text: "part ".repeat(20) } },
    );
    await runner.postEvents(task.taskId, task.attempt, events);
    await runner.complete(task.taskId, { attempt: task.attempt, status: "done", localSessionId: `ses_${task.taskId}` });
    await fixture.sql`
      insert into desktop_task
      select (jsonb_populate_record(null::desktop_task, to_jsonb(t) || jsonb_build_object(
        'id', 'rst_' || lpad(${turns}::text || 'x' || g::text, 26, '0'), 'kind', 'remote_session.send',
        'created_at', t.created_at + g * interval '1 ms'))).*
      from desktop_task t, generate_series(1, ${turns - 1}) g where t.id = ${task.taskId}`;
    await fixture.sql`
      insert into desktop_task_event (organization_id, task_id, attempt, sequence, type, event, received_at)
      select e.organization_id, 'rst_' || lpad(${turns}::text || 'x' || g::text, 26, '0'), e.attempt, e.sequence, e.type, e.event, e.received_at
      from desktop_task_event e, generate_series(1, ${turns - 1}) g where e.task_id = ${task.taskId}`;
    await fixture.sql`analyze desktop_task, desktop_task_event`;

    let cursor: string | undefined;
    for (;;) {
      const page = await fixture.execute("remote-session:read", { sessionId, limit: 100, ...(cursor ? { cursor } : {}) });
      cursor = page.structuredContent.cursor as string;
      if (!page.structuredContent.hasMore) break;
    }
    const { a: _anchor, ...rest } = JSON.parse(Buffer.from(cursor!, "base64url").toString("utf8")) as Record<string, unknown>;
    const cursors = {
      "cursor as returned (from its turn on)": cursor!,
      "anchor stripped (every turn, baseline)": Buffer.from(JSON.stringify(rest)).toString("base64url"),
    };
    for (const [name, read] of Object.entries(cursors)) {
      const samples: number[] = [];
      for (let i = 0; i < READS; i++) {
        const t0 = performance.now();
        const page = await fixture.execute("remote-session:read", { sessionId, cursor: read, limit: 100 });
        samples.push(performance.now() - t0);
        if (page.isError) throw new Error(JSON.stringify(page.structuredContent));
      }
      rows[`${turns} turns: ${name}`] = { ...summarize(samples), reads: READS };
    }
  }
  await fixture.close();
} finally {
  await db.stop();
}
await report("read-cost", db.server, rows, [
  `A desktop session of N turns, each ${EVENTS} events (one message), read at its end (no new messages) through the capability in process, ${READS} reads per line; times in ms. A waiting read loads the same on each wake.`,
]);
process.exit(0);
