// The NOTIFY commit lock: writers committing plain inserts, inserts with a pg_notify in the same
// transaction (what every task, event and completion transaction did), and inserts whose hint
// leaves after the commit through the desktop target's coalescing publisher (what they do now);
// and inserts whose hint leaves after the commit on the NATS wake bus (Debian's nats-server, when
// installed); each with PostgreSQL's own flush and with an emulated 1 ms slower one
// (commit_delay), one listener connected as a gateway replica would be. Same run, same PostgreSQL.
import { createWakeHub, postgresWakeBus, transaction, type WakeBus } from "@openwork/desktop-target";
import { createHintPublisher, type TransactionScope } from "@openwork/desktop-target/internal";
import { connectNatsWakeBus } from "@openwork/wake-bus-nats";
import { findNatsServer, startNatsServer } from "@openwork/wake-bus-nats/testing";
import postgres from "postgres";
import { benchDatabase, report, sleep } from "./harness.js";

const WRITERS = Number(process.env.WRITERS ?? 32);
const SECONDS = Number(process.env.SECONDS ?? 4);
const CHANNEL = "openwork_desktop_session";
const db = await benchDatabase("notify_ceiling");
const rows: Record<string, Record<string, unknown>> = {};
try {
  const admin = postgres(db.url, { max: 1, onnotice: () => {} });
  await admin`create table bench_write (id bigserial primary key, session_id text not null, at timestamptz not null default now())`;
  let heard = 0;
  const listener = postgres(db.url, { max: 1, onnotice: () => {} });
  await listener.listen(CHANNEL, (payload) => (heard += payload.split(",").length));

  const nats = findNatsServer() ? await startNatsServer() : null;
  let natsHeard: WakeBus | undefined;
  if (nats) {
    natsHeard = await connectNatsWakeBus({ servers: nats.url });
    await natsHeard.subscribe({
      sessions: (ids) => {
        heard += ids.length;
      },
      wakes: () => {},
      resync: () => {},
      unreadable: () => {},
    });
  }

  type Mode = "insert" | "insert + NOTIFY in the transaction" | "insert, hint after commit (coalesced)" | "insert, hint after commit on NATS";
  const write: Record<Mode, (store: TransactionScope, id: string) => Promise<unknown>> = {
    insert: ({ sql }, id) => sql`insert into bench_write (session_id) values (${id})`,
    "insert + NOTIFY in the transaction": ({ sql }, id) =>
      sql.begin((tx) => [tx`insert into bench_write (session_id) values (${id})`, tx`select pg_notify(${CHANNEL}, ${id})`]),
    "insert, hint after commit (coalesced)": (store, id) =>
      transaction(store, async (tx, hints) => {
        await tx`insert into bench_write (session_id) values (${id})`;
        hints.session("org_bench", id);
      }),
    "insert, hint after commit on NATS": (store, id) =>
      transaction(store, async (tx, hints) => {
        await tx`insert into bench_write (session_id) values (${id})`;
        hints.session("org_bench", id);
      }),
  };
  const modes = (Object.keys(write) as Mode[]).filter((mode) => nats || mode !== "insert, hint after commit on NATS");
  if (!nats) rows["insert, hint after commit on NATS"] = { skipped: "nats-server is not installed (apt-get install nats-server)" };
  for (const flush of ["PostgreSQL's flush", "flush 1 ms slower (commit_delay)"] as const) {
    // commit_delay waits before each WAL flush: a slower disk or a synchronous standby.
    const connection = flush === "PostgreSQL's flush" ? {} : { commit_delay: "1000", commit_siblings: "0" };
    for (const mode of modes) {
      const sql = postgres(db.url, { max: WRITERS, onnotice: () => {}, connection });
      // On NATS, the hub's publisher sends the hints through its bus; else NOTIFY through the client.
      const hub = mode === "insert, hint after commit on NATS" && nats ? createWakeHub({ sql, bus: await connectNatsWakeBus({ servers: nats.url }) }) : null;
      await hub?.ready;
      const store = { sql, publisher: hub?.publisher ?? createHintPublisher(postgresWakeBus({ sql })) };
      await Promise.all(Array.from({ length: WRITERS }, () => sql`select 1`));
      heard = 0;
      let done = 0;
      const until = performance.now() + SECONDS * 1000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; performance.now() < until; i++, done++) await write[mode](store, `rs_w${w}_${i}`);
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      await sleep(300);
      rows[`${mode} — ${flush}`] = { writers: WRITERS, commits: done, perSecond: Math.round(done / seconds), hintsHeard: mode === "insert" ? "—" : heard };
      await hub?.close();
      await sql.end();
    }
  }
  await natsHeard?.close();
  await nats?.stop();
  await listener.end();
  await admin.end();
} finally {
  await db.stop();
}
await report("notify-ceiling", db.server, rows, [
  `${WRITERS} writers for ${SECONDS} s per line, each committing one row at a time; one LISTEN connection on the channel (on NATS: one subscribing connection). "hint after commit": the desktop target's transaction() and the hints it hands its callback (one notifying statement per batch of committed hints, at most one in flight). hintsHeard: hints the listener received (every one must arrive).`,
]);
process.exit(0);
