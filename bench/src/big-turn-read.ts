// What one read of a turn with many events costs: a desktop turn of EVENTS events (deltas of one
// reply, every tenth a tool call) posted through the runner routes, then read at the default limit
// through the capability, from the turn's fold (what reads do now) and with the fold stripped (the
// task read as one from before folding: every event row loaded and folded — what each read did
// before; the baseline). Same run, same turn. Also: what an events post costs early and late in the
// turn (the fold is rewritten on each), and a bystander's `list` while readers read the turn.
import { benchDatabase, report, summarize } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const EVENTS = Number(process.env.EVENTS ?? 30_000);
const READS = Number(process.env.READS ?? 40);
const READERS = Number(process.env.READERS ?? 4);
const PER_POST = 100;
const db = await benchDatabase("big_turn_read");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const fixture = await benchGateway(db.url);
  const runner = await fixture.runnerClient("bench-big-turn-01");
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  const created = await fixture.execute("remote-session:create", { target: "desktop", prompt: "turn", deliverBy });
  const sessionId = created.structuredContent.sessionId as string;
  const task = (await runner.claimNext())!;
  const posts: number[] = [];
  for (let from = 1; from <= EVENTS; from += PER_POST) {
    const batch = Array.from({ length: Math.min(PER_POST, EVENTS - from + 1) }, (_, i) => {
      const sequence = from + i;
      return sequence % 10 === 0
        ? { sequence, type: "tool.call" as const, payload: { callId: `call_${sequence}`, name: "bash", status: "completed" as const } }
        : { sequence, type: "assistant.delta" as const, payload: { messageId: "m1", text: "a chatty reply, forty characters long.. " } };
    });
    const t0 = performance.now();
    await runner.postEvents(task.taskId, task.attempt, batch);
    posts.push(performance.now() - t0);
  }
  const [stored] = await fixture.sql<{ bytes: number; events: number }[]>`
    select event_bytes as bytes, (select count(*)::int from desktop_task_event where task_id = ${task.taskId}) as events from desktop_task where id = ${task.taskId}`;
  const tenth = Math.max(1, Math.floor(posts.length / 10));
  rows[`events post (${PER_POST} events), first tenth of the turn`] = summarize(posts.slice(0, tenth));
  rows[`events post (${PER_POST} events), last tenth of the turn`] = summarize(posts.slice(-tenth));

  const readOnce = async () => {
    const t0 = performance.now();
    const page = await fixture.execute("remote-session:read", { sessionId });
    if (page.isError) throw new Error(JSON.stringify(page.structuredContent));
    return { ms: performance.now() - t0, bytes: Buffer.byteLength(JSON.stringify(page.structuredContent)) };
  };
  const list = async () => {
    const t0 = performance.now();
    await fixture.execute("remote-session:list", {});
    return performance.now() - t0;
  };
  const [{ folded }] = (await fixture.sql`select folded from desktop_task where id = ${task.taskId}`) as unknown as [{ folded: unknown }];
  const modes: [string, () => Promise<unknown>][] = [
    ["from the fold", async () => fixture.sql`update desktop_task set folded = ${fixture.sql.json(folded as never)} where id = ${task.taskId}`],
    ["fold stripped: every event loaded (baseline)", async () => fixture.sql`update desktop_task set folded = null where id = ${task.taskId}`],
  ];
  for (const [name, prepare] of modes) {
    await prepare();
    const samples: number[] = [];
    let bytes = 0;
    for (let i = 0; i < READS; i++) {
      const read = await readOnce();
      samples.push(read.ms);
      bytes = read.bytes;
    }
    rows[`read, ${name}`] = { ...summarize(samples), bytes, reads: READS };
    // A bystander's list while READERS readers read this turn back to back.
    let reading = true;
    const readers = Array.from({ length: READERS }, async () => {
      while (reading) await readOnce();
    });
    const bystander: number[] = [];
    for (let i = 0; i < READS; i++) bystander.push(await list());
    reading = false;
    await Promise.all(readers);
    rows[`bystander list, ${READERS} readers ${name}`] = summarize(bystander);
  }
  const quiet: number[] = [];
  for (let i = 0; i < READS; i++) quiet.push(await list());
  rows["bystander list, nobody reading"] = summarize(quiet);
  rows["the turn"] = { events: stored!.events, eventBytes: stored!.bytes };
  await fixture.close();
} finally {
  await db.stop();
}
await report("big-turn-read", db.server, rows, [
  `One desktop turn of ${EVENTS} events (deltas of one reply, every tenth a tool call), read at the default limit through the capability in process, ${READS} reads per line; times in ms, bytes of the read's structured answer.`,
]);
process.exit(0);
