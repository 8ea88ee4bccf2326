// Turns per second through the gateway with P event posts per turn (P = 20 by default): create
// (execute_capability) → claim-next → P posts of one event → complete, 16 turns at a time, with
// PostgreSQL's flush and with a 1 ms slower one (commit_delay), hints on PostgreSQL's NOTIFY and
// on NATS (Debian's nats-server, when installed); beside the plain-insert ceiling of the same
// server in the same run (32 writers).
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import postgres from "postgres";
import { benchDatabase, report } from "./harness.js";
import { benchGateway } from "./gateway-fixture.js";

const P = Number(process.env.P ?? 20);
const TURNS = Number(process.env.TURNS ?? 400);
const CONCURRENT = 16;
const db = await benchDatabase("turns");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const admin = postgres(db.url, { max: 1, onnotice: () => {} });
  await admin`create table bench_write (id bigserial primary key, at timestamptz not null default now())`;
  const ceiling = async () => {
    const sql = postgres(db.url, { max: 32, onnotice: () => {} });
    let done = 0;
    const until = performance.now() + 3_000;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (; performance.now() < until; done++) await sql`insert into bench_write default values`;
      }),
    );
    await sql.end();
    return Math.round(done / 3);
  };
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  const turns = async (fixture: Awaited<ReturnType<typeof benchGateway>>, runners: Awaited<ReturnType<typeof fixture.runnerClient>>[]) => {
    let started = 0;
    const t0 = performance.now();
    await Promise.all(
      runners.map(async (runner) => {
        while (started < TURNS) {
          started++;
          // Store-and-forward (deliverBy): any of the member's runners may take it.
          const created = await fixture.execute("remote-session:create", { target: "desktop", prompt: "turn", deliverBy });
          if (created.isError) throw new Error(created.content[0]?.text);
          const task = await runner.claimNext();
          if (!task) continue;
          for (let sequence = 1; sequence <= P; sequence++) {
            await runner.postEvents(task.taskId, task.attempt, [
              { sequence, type: "assistant.delta", payload: { messageId: "m1", text: `part ${sequence} ` } },
            ]);
          }
          await runner.complete(task.taskId, { attempt: task.attempt, status: "done", localSessionId: `ses_${task.taskId}` });
        }
      }),
    );
    return +(TURNS / ((performance.now() - t0) / 1000)).toFixed(1);
  };
  // The Host header a socket would have carried (the gateway answers loopback hosts only).
  const inProcess = (fixture: Awaited<ReturnType<typeof benchGateway>>) =>
    ((input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const headers = new Headers(request.headers);
      headers.set("host", new URL(request.url).host);
      return fixture.gateway.fetch(new Request(request, { headers }));
    }) as typeof fetch;
  const nats = findNatsServer() ? await startNatsServer() : null;
  // The last: every runner request handed to the gateway's fetch handler in process (no sockets).
  const configs = [
    { name: "hints after commit on NOTIFY", natsUrl: null, inProcess: false },
    ...(nats ? [{ name: "hints on NATS", natsUrl: nats.url, inProcess: false }] : []),
    { name: "hints after commit on NOTIFY, runner requests in process (no sockets)", natsUrl: null, inProcess: true },
  ];
  for (const flush of ["PostgreSQL's flush", "flush 1 ms slower (commit_delay)"] as const) {
    await admin.unsafe(`alter system set commit_delay = ${flush === "PostgreSQL's flush" ? 0 : 1000}`);
    await admin.unsafe("alter system set commit_siblings = 0");
    await admin`select pg_reload_conf()`;
    for (const config of configs) {
      const fixture = await benchGateway(db.url, config.natsUrl ? { wakeBus: await connectNatsWakeBus({ servers: config.natsUrl }) } : {});
      const runners = await Promise.all(
        Array.from({ length: CONCURRENT }, (_, i) =>
          fixture.runnerClient(`bench-turns-${String(i).padStart(2, "0")}`, config.inProcess ? inProcess(fixture) : undefined),
        ),
      );
      rows[`${flush}: turns through the gateway (${config.name})`] = { P, turns: TURNS, perSecond: await turns(fixture, runners) };
      await fixture.close();
    }
    rows[`${flush}: plain-insert ceiling (32 writers)`] = { perSecond: await ceiling() };
  }
  if (!nats) rows["hints on NATS"] = { skipped: "nats-server is not installed (apt-get install nats-server)" };
  await nats?.stop();
  await admin.unsafe("alter system reset commit_delay");
  await admin.unsafe("alter system reset commit_siblings");
  await admin`select pg_reload_conf()`;
  await admin.end();
} finally {
  await db.stop();
}
await report("turns", db.server, rows, [
  `${TURNS} turns, ${CONCURRENT} at a time, each: execute_capability(remote-session:create, desktop) in process, then over HTTP claim-next, ${P} event posts of one event each, complete. The gateway, the runner clients and PostgreSQL share the two cores.`,
]);
process.exit(0);
