// Idle desktops: what N idle signed-in desktops cost one gateway process, and what happens when
// they all come back at once. The gateway (serveGateway, its own process, its connection limits
// sized from its open-file limit) runs on a fresh PostgreSQL with pg_stat_statements; N desktops
// (PER_MEMBER to a member) run in farm processes of PER_FARM each, every farm from its own loopback
// source address: the project's runner client (createRunnerClient + runRunner), or with LITE=1 a
// node:http client sending the same wire traffic. In the same run, the baseline: the same gateway
// with one probe desktop (its own member, in this process) before the N open. Per idle desktop:
// (idle window − baseline) / desktops streaming, of the gateway's CPU, PostgreSQL's CPU, statements, rows written and
// WAL; the gateway's RSS and heap after a forced GC; the runner requests the farms sent. Dispatch
// to the probe among the N beside the probe alone. Then the sign-in storm: every wake stream
// dropped at once (STORM=drop, the connections closed by the gateway's process) or the gateway
// restarted (STORM=restart: killed, a new process on the same port and database), the time until
// every desktop streams again, and the probe's member's `remote-session:list` over MCP meanwhile
// (refused or failed calls counted) beside the same calls just before.
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { loadavg } from "node:os";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, runRunner } from "@openwork/runner-protocol/client";
import postgres from "postgres";
import { benchMember, mintBenchRunner } from "../gateway-fixture.js";
import { benchDatabase, report, sleep, summarize } from "../harness.js";
import { clusterCpuMs, postmasterOf, processCpuMs } from "../process-cpu.js";
import type { GatewayCount, GatewayStart, GatewayStarted, GatewayStats } from "./gateway-process.js";
import { type Child, child, type Desktop, type FarmStats } from "./processes.js";

const N = Number(process.env.N ?? 2_000);
const LITE = process.env.LITE === "1";
const PER_MEMBER = Number(process.env.PER_MEMBER ?? 10);
const PER_FARM = Number(process.env.PER_FARM ?? (LITE ? 9_500 : 5_000));
// Below the gateway's own open rate (200 a second after a burst of 400), so opening is not refused.
const OPEN_RATE = Number(process.env.OPEN_RATE ?? 150);
const BASE_S = Number(process.env.BASE_S ?? 60);
// Past one presence flush (30 s) after the opens: the flush that notes the newly held desktops (a row each) is the opening's, not the idle window's.
const SETTLE_S = Number(process.env.SETTLE_S ?? 40);
// 10 min: every desktop's claim-next falls once in any window this long (the runner polls every 10 min while its stream is open).
const IDLE_S = Number(process.env.IDLE_S ?? 600);
const PROBES = Number(process.env.PROBES ?? 40);
const OPEN_TIMEOUT_S = Number(process.env.OPEN_TIMEOUT_S ?? Math.ceil(N / OPEN_RATE) + 60);
const STORM = (process.env.STORM ?? "drop") as "drop" | "restart" | "off";
const STORM_TIMEOUT_S = Number(process.env.STORM_TIMEOUT_S ?? Math.ceil(N / 100) + 60);
const LIST_BASE_S = Number(process.env.LIST_BASE_S ?? 10);
const LIST_EVERY_MS = 200;
const CONTROLLER = "idle-desktops-controller";
const connectionLimits = {
  ...(process.env.MAX_CONNECTIONS ? { maxConnections: Number(process.env.MAX_CONNECTIONS) } : {}),
  ...(process.env.MAX_STREAMS ? { maxStreams: Number(process.env.MAX_STREAMS) } : {}),
};
// The hub keeps 20 streams of one member per process (DEFAULT_STREAM_LIMITS.perMember): more would evict each other.
if (PER_MEMBER < 1 || PER_MEMBER > 20) throw new Error("PER_MEMBER must be 1–20: one process holds 20 wake streams of a member");
if (!["drop", "restart", "off"].includes(STORM)) throw new Error("STORM is drop, restart or off");

const t0 = performance.now();
const say = (line: string) => process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);
const MiB = (bytes: number) => +(bytes / 2 ** 20).toFixed(1);
const round = (n: number, digits = 2) => +n.toFixed(digits);
const sumOf = (counts: Record<string, number>[]) => {
  const total: Record<string, number> = {};
  for (const c of counts) for (const [k, v] of Object.entries(c)) total[k] = (total[k] ?? 0) + v;
  return total;
};
const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(a).flatMap(([k, v]) => (v - (b[k] ?? 0) ? [[k, v - (b[k] ?? 0)]] : [])));

/** POSTs `body` to `url`: through fetch's kept-alive connections, or (`fresh`) on a new connection of its own. 10 s at most. */
async function post(url: string, headers: Record<string, string>, body: string, fresh: boolean) {
  if (!fresh) {
    const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
    return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() };
  }
  return new Promise<{ status: number; contentType: string; text: string }>((resolve, reject) => {
    const sent = request(url, { method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, contentType: response.headers["content-type"] ?? "", text }));
      response.on("error", reject);
    });
    sent.setTimeout(10_000, () => sent.destroy(Object.assign(new Error("timeout"), { code: "TimeoutError" })));
    sent.on("error", reject);
    sent.end(body);
  });
}

/** One MCP tools/call of `execute_capability` over HTTP (no session) with `token`: its HTTP status and whether it succeeded. */
async function callCapability(mcpUrl: string, token: string, name: string, body: unknown, id: number, fresh = false) {
  const { status, contentType, text } = await post(
    mcpUrl,
    { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_capability", arguments: { name, body } } }),
    fresh,
  );
  // JSON, or one SSE event whose data is the JSON-RPC answer.
  const json = contentType.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5))
        .join("")
    : text;
  let answer: { error?: unknown; result?: { isError?: boolean } } = {};
  try {
    answer = JSON.parse(json);
  } catch {
    // not an answer: counted as failed below
  }
  const ok = status >= 200 && status < 300 && answer.result !== undefined && !answer.error && !answer.result.isError;
  return { status, ok, text };
}

const db = await benchDatabase("idle_desktops", { settings: { shared_preload_libraries: "pg_stat_statements", max_connections: "200" } });
// The controller reads the bench database's figures from the admin database: its own queries are not counted.
const admin = postgres(db.adminUrl, { max: 1, onnotice: () => {} });
const rows: Record<string, Record<string, unknown>> = {};
const notes: string[] = [];
const detail: Record<string, unknown> = {};
const farms: Child[] = [];
let gateway: Child | undefined;
let stopProbe: (() => Promise<void>) | undefined;
const closing: (() => Promise<void>)[] = [];
const loadStart = loadavg()[0]!;
try {
  await admin`create extension if not exists pg_stat_statements`;
  const postmaster = await postmasterOf(admin);
  const members = Math.ceil(N / PER_MEMBER) + 1;
  const probeMember = benchMember(members - 1);
  const start: GatewayStart = { databaseUrl: db.url, members, port: 0, ...(Object.keys(connectionLimits).length ? { connectionLimits } : {}) };
  gateway = child("./gateway-process.ts", ["--expose-gc"]);
  const started = await gateway.ask<GatewayStarted>(start, 120_000);
  const { baseUrl, mcpUrl } = started;
  const port = Number(new URL(baseUrl).port);
  say(
    `gateway ${gateway.pid()} at ${baseUrl}, ${members} members; limits ${JSON.stringify(started.connectionLimits)}, open files ${started.fileLimit.soft} (hard ${started.fileLimit.hard})`,
  );
  if (N + 1 > started.connectionLimits.maxStreams)
    notes.push(`WARNING: N + 1 = ${N + 1} streams is past the gateway's maxStreams ${started.connectionLimits.maxStreams}.`);

  const count = () => gateway!.ask<GatewayCount>("count");
  /** Waits until `streams` wake streams are held, or throws after `seconds` (`what` names the wait). */
  const waitForStreams = async (streams: number, seconds: number, what: string) => {
    const until = performance.now() + seconds * 1_000;
    for (;;) {
      const { streams: held } = await count();
      if (held >= streams) return;
      if (performance.now() > until) throw new Error(`${what}: ${held} of ${streams} wake streams after ${seconds} s`);
      await sleep(100);
    }
  };

  // The snapshots: the gateway's memory after a forced GC, CPU from /proc, the bench database's counters.
  const pgFigures = async () => {
    const [row] = await admin<{ commits: string; written: string; lsn: string; statements: string; connections: number }[]>`
      select d.xact_commit::text as commits, (d.tup_inserted + d.tup_updated + d.tup_deleted)::text as written, pg_current_wal_lsn()::text as lsn,
        (select coalesce(sum(calls), 0)::text from pg_stat_statements where dbid = d.datid) as statements,
        (select count(*)::int from pg_stat_activity where datname = d.datname and application_name <> ${CONTROLLER}) as connections
      from pg_stat_database d where d.datname = ${db.database}`;
    return row!;
  };
  // On the bench database (not counted among the gateway's connections): rows written by table, catalogs too, and the vacuum.
  const bench = postgres(db.url, { max: 1, onnotice: () => {}, connection: { application_name: CONTROLLER } });
  closing.push(() => bench.end({ timeout: 2 }));
  const writesByTable = async () =>
    Object.fromEntries(
      (await bench<{ relname: string; written: string }[]>`select relname, (n_tup_ins + n_tup_upd + n_tup_del)::text as written from pg_stat_all_tables`).map(
        (row) => [row.relname, Number(row.written)],
      ),
    );
  const cpu = () => ({
    at: performance.now(),
    gatewayCpu: processCpuMs(gateway!.pid()),
    postgresCpu: clusterCpuMs(postmaster),
    farmsCpu: farms.reduce((ms, farm) => ms + processCpuMs(farm.pid()), 0),
  });
  // A window's start is read after the GC the memory figure forces, its end before: the GC is not in the window.
  const snapshot = async (edge: "start" | "end") => {
    if (edge === "start") {
      const gw = await gateway!.ask<GatewayStats>("stats");
      return { gw, ...cpu(), pg: await pgFigures() };
    }
    const times = cpu();
    const pg = await pgFigures();
    return { ...times, pg, gw: await gateway!.ask<GatewayStats>("stats") };
  };
  type Snapshot = Awaited<ReturnType<typeof snapshot>>;
  const rates = async (a: Snapshot, b: Snapshot) => {
    const minutes = (b.at - a.at) / 60_000;
    const [wal] = await admin<{ bytes: string }[]>`select pg_wal_lsn_diff(${b.pg.lsn}::pg_lsn, ${a.pg.lsn}::pg_lsn)::text as bytes`;
    const per = (x: number) => round(x / minutes, 1);
    return {
      minutes: round(minutes),
      gatewayCpuMsPerMin: per(b.gatewayCpu - a.gatewayCpu),
      postgresCpuMsPerMin: per(b.postgresCpu - a.postgresCpu),
      farmsCpuMsPerMin: per(b.farmsCpu - a.farmsCpu),
      statementsPerMin: per(Number(b.pg.statements) - Number(a.pg.statements)),
      commitsPerMin: per(Number(b.pg.commits) - Number(a.pg.commits)),
      rowsWrittenPerMin: per(Number(b.pg.written) - Number(a.pg.written)),
      walBytesPerMin: per(Number(wal!.bytes)),
    };
  };
  type Rates = Awaited<ReturnType<typeof rates>>;

  // The probe desktop: the project's runner in this process, its own member; its handler says when it holds a create.
  const probeToken = (await mintBenchRunner(baseUrl, "probe-desktop", probeMember)).token;
  let held: ((at: number) => void) | undefined;
  const probe = runRunner({
    client: createRunnerClient({ baseUrl, token: probeToken }),
    gatewayProtocolVersion: RUNNER_PROTOCOL_VERSION,
    handlers: {
      "remote_session.create": async () => {
        held?.(performance.now());
        return { status: "done", localSessionId: "ses_probe" };
      },
    },
  });
  stopProbe = () => probe.stop();
  let rpcId = 0;
  // Dispatch: the MCP answer to a create pinned to the probe → its handler starts (dispatch.ts's definition). The first is a warm-up.
  const dispatch = async (samples: number) => {
    const latencies: number[] = [];
    let failed = 0;
    let lost = 0;
    for (let i = 0; i <= samples; i++) {
      const holds = new Promise<number>((resolve) => {
        held = resolve;
        setTimeout(() => resolve(Number.NaN), 10_000);
      });
      const created = await callCapability(
        mcpUrl,
        probeMember.mcpToken,
        "remote-session:create",
        { target: "desktop", runner: "probe-desktop", title: `probe ${i}` },
        ++rpcId,
      ).catch((error: unknown) => ({ status: 0, ok: false, text: String(error) }));
      const returnedAt = performance.now();
      if (!created.ok) {
        if (++failed <= 2) say(`probe create failed: ${created.status} ${created.text.slice(0, 200)}`);
        continue;
      }
      const at = await holds;
      if (Number.isNaN(at)) lost++;
      else if (i > 0) latencies.push(at - returnedAt);
      await sleep(150);
    }
    return { ...summarize(latencies), failed, lostAfter10s: lost };
  };
  // The probe's member lists its sessions over MCP, one call every LIST_EVERY_MS, until stopped: latencies and what failed.
  // On fetch's kept-alive connection, or (`fresh`) each call on a new connection, as an agent connecting anew.
  const listLoop = (fresh: boolean) => {
    const latencies: number[] = [];
    const outcomes: Record<string, number> = {};
    let running = true;
    const done = (async () => {
      while (running) {
        const begun = performance.now();
        const outcome = await callCapability(mcpUrl, probeMember.mcpToken, "remote-session:list", {}, ++rpcId, fresh).then(
          (answer) => (answer.ok ? "ok" : `HTTP ${answer.status}${answer.status === 200 ? " tool error" : ""}`),
          (error: { code?: string; name?: string; cause?: { code?: string } }) => error.cause?.code ?? error.code ?? error.name ?? "error",
        );
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        if (outcome === "ok") latencies.push(performance.now() - begun);
        await sleep(Math.max(0, LIST_EVERY_MS - (performance.now() - begun)));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await done;
        const calls = Object.values(outcomes).reduce((a, b) => a + b, 0);
        return { ...summarize(latencies), calls, refusedOrFailed: calls - (outcomes.ok ?? 0), outcomes };
      },
    };
  };

  await waitForStreams(1, 30, "the probe desktop's stream");
  await sleep(SETTLE_S * 1_000);

  // Baseline, same run: the gateway with the probe desktop only.
  const b0 = await snapshot("start");
  await sleep(BASE_S * 1_000);
  const b1 = await snapshot("end");
  const baseline = await rates(b0, b1);
  const dispatchAlone = await dispatch(PROBES);
  say(`baseline ${JSON.stringify(baseline)}; dispatch, probe alone ${JSON.stringify(dispatchAlone)}`);

  // Sign-in: one token mint per desktop (it registers the desktop), 50 at a time.
  const m0 = cpu();
  const desktops: Desktop[] = [];
  const mintFailures: Record<string, number> = {};
  for (let i = 0; i < N; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, N - i) }, async (_, j) => {
        const runnerId = `idle-${String(i + j).padStart(6, "0")}`;
        try {
          return { runnerId, token: (await mintBenchRunner(baseUrl, runnerId, benchMember(Math.floor((i + j) / PER_MEMBER)))).token };
        } catch (error) {
          const code = (error as { code?: string }).code ?? String(error).slice(0, 80);
          mintFailures[code] = (mintFailures[code] ?? 0) + 1;
          return null;
        }
      }),
    );
    for (const desktop of batch) if (desktop) desktops.push(desktop);
  }
  const m1 = cpu();
  const mint = {
    minted: desktops.length,
    seconds: round((m1.at - m0.at) / 1000, 1),
    gatewayCpuUsPerMint: Math.round(((m1.gatewayCpu - m0.gatewayCpu) * 1000) / N),
    postgresCpuUsPerMint: Math.round(((m1.postgresCpu - m0.postgresCpu) * 1000) / N),
    failures: mintFailures,
  };
  say(`minted ${JSON.stringify(mint)}`);
  if (desktops.length < N) notes.push(`WARNING: ${N - desktops.length} of ${N} mints failed: ${JSON.stringify(mintFailures)}.`);
  await sleep(3_000);
  const before = await snapshot("start");

  // Open: farms of PER_FARM desktops, each from its own loopback source address, OPEN_RATE a second in all.
  const opening = performance.now();
  const farmCount = Math.ceil(desktops.length / PER_FARM);
  for (let k = 0; k < farmCount; k++) {
    const farm = child(LITE ? "./light-farm.ts" : "./runner-farm.ts", LITE ? [] : ["--expose-internals"]);
    farms.push(farm);
    await farm.ask({
      baseUrl,
      desktops: desktops.slice(k * PER_FARM, (k + 1) * PER_FARM),
      localAddress: `127.0.0.${10 + k}`,
      openPerSecond: Math.ceil(OPEN_RATE / farmCount),
    });
  }
  const farmStats = async () => sumStats(await Promise.all(farms.map((farm) => farm.ask<FarmStats>("stats"))));
  const openTimeline: unknown[] = [];
  let last = cpu();
  for (;;) {
    await sleep(5_000);
    const now = cpu();
    const { streams, connections } = await count();
    const dt = now.at - last.at;
    openTimeline.push({
      s: Math.round((now.at - opening) / 1000),
      streams,
      requestConnections: connections.open,
      gatewayCpuPct: Math.round(((now.gatewayCpu - last.gatewayCpu) / dt) * 100),
      postgresCpuPct: Math.round(((now.postgresCpu - last.postgresCpu) / dt) * 100),
    });
    last = now;
    say(`opening ${JSON.stringify(openTimeline.at(-1))}`);
    if (streams >= desktops.length + 1) break;
    if (now.at - opening > OPEN_TIMEOUT_S * 1_000) {
      const warning = `WARNING: only ${streams - 1} of ${desktops.length} desktops streamed after OPEN_TIMEOUT_S = ${OPEN_TIMEOUT_S} s; figures are per streaming desktop.`;
      say(warning);
      notes.push(warning);
      break;
    }
  }
  const openSeconds = round((performance.now() - opening) / 1000, 1);
  const afterOpen = await farmStats();
  // The opens' writes vacuumed and analyzed now, as autovacuum would once: its WAL and catalog rows are the opening's, not the idle window's.
  await bench.unsafe("vacuum analyze");
  await sleep(SETTLE_S * 1_000);

  // The idle window.
  if (process.env.PROFILE) await gateway.ask({ profile: "start" });
  const w0 = await writesByTable();
  const i0 = await snapshot("start");
  const f0 = await farmStats();
  const idleTimeline: unknown[] = [];
  const pgConnections: number[] = [];
  let previous = cpu();
  while (performance.now() - i0.at < IDLE_S * 1_000 - 10_000) {
    await sleep(10_000);
    const now = cpu();
    const { streams } = await count();
    const pg = await pgFigures();
    pgConnections.push(pg.connections);
    idleTimeline.push({
      s: Math.round((now.at - i0.at) / 1000),
      streams,
      gatewayCpuPct: Math.round(((now.gatewayCpu - previous.gatewayCpu) / (now.at - previous.at)) * 100),
      postgresCpuPct: Math.round(((now.postgresCpu - previous.postgresCpu) / (now.at - previous.at)) * 100),
    });
    previous = now;
  }
  await sleep(Math.max(0, IDLE_S * 1_000 - (performance.now() - i0.at)));
  const i1 = await snapshot("end");
  const f1 = await farmStats();
  detail.idleWritesByTable = minus(await writesByTable(), w0);
  if (process.env.PROFILE) await gateway.ask({ profile: process.env.PROFILE }, 120_000);
  const idle = await rates(i0, i1);
  const streaming = i1.gw.streams - 1;
  const windowMinutes = (i1.at - i0.at) / 60_000;
  const perDesktop = (k: keyof Rates) => round((idle[k] - baseline[k]) / streaming, 4);
  const requestsPerMin = Object.fromEntries(
    Object.entries(minus(f1.requests, f0.requests)).map(([route, n]) => [route, round(n / streaming / windowMinutes, 4)]),
  );
  const idleRequests = Object.values(minus(f1.requests, f0.requests)).reduce((a, b) => a + b, 0);
  say(`idle ${JSON.stringify(idle)}; ${streaming} desktops streaming; requests per desktop per minute ${JSON.stringify(requestsPerMin)}`);
  const dispatchAmong = await dispatch(PROBES);
  say(`dispatch among ${streaming} ${JSON.stringify(dispatchAmong)}`);

  const cost = (label: string, r: Rates, extra: Record<string, unknown>) => ({ figure: label, ...r, ...extra });
  detail.baseline = cost("probe alone", baseline, { rssMiB: MiB(b1.gw.rss), heapMiB: MiB(b1.gw.heapUsed), pgConnections: b1.pg.connections });
  detail.idle = cost(`${streaming} idle + probe`, idle, {
    rssBeforeMiB: MiB(before.gw.rss),
    rssMiB: MiB(i1.gw.rss),
    heapBeforeMiB: MiB(before.gw.heapUsed),
    heapMiB: MiB(i1.gw.heapUsed),
    pgConnectionsMinMax: [Math.min(...pgConnections, i1.pg.connections), Math.max(...pgConnections, i1.pg.connections)],
    gatewayConnections: i1.gw.connections,
    timeline: idleTimeline,
  });
  detail.requestsPerDesktopPerMin = requestsPerMin;
  detail.open = { seconds: openSeconds, timeline: openTimeline, farms: afterOpen };
  detail.mint = mint;

  // The sign-in storm: the member's list over MCP for LIST_BASE_S first, then every stream dropped (or the gateway restarted).
  let storm: Record<string, unknown> | undefined;
  type Lists = { keptAlive: Awaited<ReturnType<ReturnType<typeof listLoop>["stop"]>>; fresh: Awaited<ReturnType<ReturnType<typeof listLoop>["stop"]>> };
  const listBoth = () => {
    const keptAlive = listLoop(false);
    const fresh = listLoop(true);
    return { stop: async (): Promise<Lists> => ({ keptAlive: await keptAlive.stop(), fresh: await fresh.stop() }) };
  };
  let listBefore: Lists | undefined;
  let listDuring: Lists | undefined;
  if (STORM !== "off") {
    const refusalsMetric = async () => {
      const text = await (await fetch(`${baseUrl}/metrics`)).text().catch(() => "");
      return text
        .split("\n")
        .filter((line) => line.startsWith("openwork_member_refusals"))
        .reduce((n, line) => n + Number(line.split(" ").at(-1)), 0);
    };
    // A restarted gateway counts from zero.
    const shareSince = async (before: GatewayCount["connections"]) => {
      const { refused, evicted } = (await count()).connections;
      return STORM === "restart" ? { refused, evicted } : { refused: refused - before.refused, evicted: evicted - before.evicted };
    };
    const quiet = listBoth();
    await sleep(LIST_BASE_S * 1_000);
    listBefore = await quiet.stop();
    const { streams: target, connections: shareBefore } = await count();
    const s0 = await farmStats();
    const tcpBefore = tcpCounters();
    const refusedBefore = await refusalsMetric();
    const list = listBoth();
    // STORM_PROFILE=file: the gateway's CPU profile over the storm (drop only: a restarted process is a new one).
    const stormProfile = STORM === "drop" ? process.env.STORM_PROFILE : undefined;
    if (stormProfile) await gateway.ask({ profile: "start" });
    const dropped = performance.now();
    let restartSeconds: number | undefined;
    if (STORM === "drop") {
      const { dropped: sockets, streams: left } = await gateway.ask<{ dropped: number; streams: number }>("drop");
      say(`storm: dropped ${sockets} wake-stream connections, ${left} streams left`);
    } else {
      say(`storm: killing gateway ${gateway.pid()} and starting a new one on port ${port}`);
      gateway.process.kill("SIGKILL");
      await new Promise((resolve) =>
        gateway!.process.exitCode !== null || gateway!.process.signalCode ? resolve(null) : gateway!.process.once("exit", resolve),
      );
      gateway = child("./gateway-process.ts", ["--expose-gc"]);
      await gateway.ask<GatewayStarted>({ ...start, port }, 120_000);
      restartSeconds = round((performance.now() - dropped) / 1000, 2);
    }
    const reached: Record<string, number> = {};
    const timeline: unknown[] = [];
    let streams = 0;
    let lastSample = 0;
    let fell = false; // the count went below the target: what comes back after is counted
    for (;;) {
      const counted = await count();
      streams = counted.streams;
      const s = (performance.now() - dropped) / 1000;
      fell ||= streams < target;
      if (fell) for (const share of [0.5, 0.9, 0.99, 1]) if (reached[share] === undefined && streams >= Math.ceil(target * share)) reached[share] = round(s);
      if (s - lastSample >= 1) {
        lastSample = s;
        timeline.push({ s: Math.round(s), streams, requestConnections: counted.connections.open });
      }
      if ((fell && streams >= target) || s > STORM_TIMEOUT_S) break;
      await sleep(100);
    }
    listDuring = await list.stop();
    if (stormProfile) await gateway.ask({ profile: stormProfile }, 120_000);
    const s1 = await farmStats();
    const byStatus = minus(s1.statuses, s0.statuses);
    storm = {
      mode: STORM,
      target,
      streams,
      secondsTo50: reached[0.5],
      secondsTo90: reached[0.9],
      secondsTo99: reached[0.99],
      secondsToAll: reached[1],
      restartSeconds,
      streamOpens: minus(s1.requests, s0.requests).events ?? 0,
      statuses: byStatus,
      warns: minus(s1.warns, s0.warns),
      gatewayRefusals: (await refusalsMetric()) - (STORM === "restart" ? 0 : refusedBefore),
      // Where resets come from: connections the share refused or ended for newer ones, and the kernel's own counts.
      connectionShare: await shareSince(shareBefore),
      tcp: minus(tcpCounters(), tcpBefore),
      timeline,
    };
    say(`storm ${JSON.stringify({ ...storm, timeline: undefined })}; list before ${JSON.stringify(listBefore)}, during ${JSON.stringify(listDuring)}`);
    if (reached[1] === undefined)
      notes.push(`WARNING: after the ${STORM}, ${streams} of ${target} wake streams were back after STORM_TIMEOUT_S = ${STORM_TIMEOUT_S} s.`);
    detail.storm = storm;
    detail.list = { before: listBefore, during: listDuring };
  }

  const totals = await farmStats();
  const final = await gateway.ask<GatewayStats>("stats");
  detail.farms = totals;
  detail.gatewayLogged = final.logged;
  const top = (order: "calls" | "rows") =>
    admin.unsafe(
      `select p.calls::text, p.rows::text, left(regexp_replace(p.query, '\\s+', ' ', 'g'), 140) as query from pg_stat_statements p
       where p.dbid = (select oid from pg_database where datname = $1) order by p.${order} desc limit 12`,
      [db.database],
    );
  detail.topStatements = { byCalls: await top("calls"), byRows: await top("rows") };

  // The table: figures by row, the same-run baseline beside the fleet and the difference per idle desktop.
  const B = "baseline, same run (probe desktop alone)";
  const W = `${streaming} idle desktops + the probe`;
  const P = "per idle desktop (baseline subtracted)";
  const line = (label: string, k: keyof Rates) => {
    rows[label] = { [B]: baseline[k], [W]: idle[k], [P]: perDesktop(k) };
  };
  line("gateway CPU ms/min", "gatewayCpuMsPerMin");
  line("PostgreSQL CPU ms/min", "postgresCpuMsPerMin");
  line("statements/min (pg_stat_statements)", "statementsPerMin");
  line("rows written/min", "rowsWrittenPerMin");
  line("WAL bytes/min", "walBytesPerMin");
  rows["runner HTTP requests/min (farms)"] = { [B]: "—", [W]: round(idleRequests / windowMinutes, 1), [P]: round(idleRequests / streaming / windowMinutes, 4) };
  rows["gateway RSS (MiB; KiB per desktop)"] = { [B]: MiB(before.gw.rss), [W]: MiB(i1.gw.rss), [P]: round((i1.gw.rss - before.gw.rss) / streaming / 1024) };
  rows["gateway heap after GC (MiB; KiB per desktop)"] = {
    [B]: MiB(before.gw.heapUsed),
    [W]: MiB(i1.gw.heapUsed),
    [P]: round((i1.gw.heapUsed - before.gw.heapUsed) / streaming / 1024),
  };
  rows["PostgreSQL connections (min–max)"] = {
    [B]: b1.pg.connections,
    [W]: (detail.idle as { pgConnectionsMinMax: number[] }).pgConnectionsMinMax.join("–"),
    [P]: "—",
  };
  rows["dispatch to the probe p50 / p99 ms"] = {
    [B]: `${dispatchAlone.p50} / ${dispatchAlone.p99}`,
    [W]: `${dispatchAmong.p50} / ${dispatchAmong.p99}`,
    [P]: "—",
  };
  rows["dispatch n, failed, lost"] = {
    [B]: `${dispatchAlone.n}, ${dispatchAlone.failed}, ${dispatchAlone.lostAfter10s}`,
    [W]: `${dispatchAmong.n}, ${dispatchAmong.failed}, ${dispatchAmong.lostAfter10s}`,
    [P]: "—",
  };
  rows[`sign-in: token mint gateway / PostgreSQL µs`] = { [B]: "—", [W]: `${mint.gatewayCpuUsPerMint} / ${mint.postgresCpuUsPerMint}`, [P]: "—" };
  rows["opening: seconds, stream opens refused"] = {
    [B]: "—",
    [W]: `${openSeconds} s, ${(afterOpen.statuses["events 503"] ?? 0) + (afterOpen.statuses["events 429"] ?? 0)} refused`,
    [P]: "—",
  };
  if (storm && listBefore && listDuring) {
    const st = storm as {
      secondsTo50?: number;
      secondsTo90?: number;
      secondsToAll?: number;
      streams: number;
      target: number;
      statuses: Record<string, number>;
    };
    rows[`storm (${STORM}): s to 50 / 90 / 100 % streaming`] = {
      [B]: `${st.target} streams before`,
      [W]: `${st.secondsTo50 ?? "—"} / ${st.secondsTo90 ?? "—"} / ${st.secondsToAll ?? `not in ${STORM_TIMEOUT_S} s (${st.streams})`}`,
      [P]: "—",
    };
    rows["storm: stream opens 200 / 503 / 429; claims non-200"] = {
      [B]: "—",
      [W]: `${st.statuses["events 200"] ?? 0} / ${st.statuses["events 503"] ?? 0} / ${st.statuses["events 429"] ?? 0}; ${Object.entries(st.statuses)
        .filter(([k]) => k.startsWith("tasks/claim-next") && !k.endsWith(" 200"))
        .reduce((n, [, v]) => n + v, 0)}`,
      [P]: "—",
    };
    for (const [kind, label] of [
      ["keptAlive", "kept-alive connection"],
      ["fresh", "a new connection each"],
    ] as const) {
      const [before, during] = [listBefore[kind], listDuring[kind]];
      rows[`MCP list, ${label}: p50 / p99 ms (before the drop | in the storm)`] = {
        [B]: `${before.p50} / ${before.p99}`,
        [W]: `${during.p50} / ${during.p99}`,
        [P]: "—",
      };
      rows[`MCP list, ${label}: refused or failed / calls`] = {
        [B]: `${before.refusedOrFailed} / ${before.calls}`,
        [W]: `${during.refusedOrFailed} / ${during.calls}`,
        [P]: "—",
      };
    }
  }
  const limits = started.connectionLimits;
  notes.push(
    `${LITE ? "light node:http desktops (LITE=1)" : "the project's runner client (createRunnerClient + runRunner, defaults)"}, ${desktops.length} desktops, ${PER_MEMBER} a member, ${farmCount} farm(s) of ≤ ${PER_FARM} from 127.0.0.10…; opened at ${OPEN_RATE}/s; baseline ${BASE_S} s, idle window ${IDLE_S} s, ${PROBES} dispatch probes.`,
    `gateway: serveGateway, pool 10; connection limits ${limits.maxConnections} request connections + ${limits.maxStreams} wake streams (${Object.keys(connectionLimits).length ? `given: ${JSON.stringify(connectionLimits)}` : "sized from the open-file limit"}); open files ${started.fileLimit.soft} (hard ${started.fileLimit.hard}); heap limit ${started.heapLimitMiB} MiB.`,
    `per idle desktop: (idle window − baseline) / ${streaming} streaming desktops; RSS and heap: (end of the idle window − before the opens, after a forced GC) / ${streaming}. Runner requests per desktop per minute: ${JSON.stringify(requestsPerMin)}.`,
    `farms' answers (whole run): ${JSON.stringify(totals.statuses)}; their failures: ${JSON.stringify(totals.warns)}; farms' CPU at idle ${idle.farmsCpuMsPerMin} ms/min (the clients', not the server's).`,
    `gateway's logged warnings and errors: ${JSON.stringify(final.logged)}.`,
    ...(storm
      ? [
          `storm: ${JSON.stringify({ ...storm, timeline: undefined })}; list outcomes in it: kept-alive ${JSON.stringify(listDuring?.keptAlive.outcomes)}, new connections ${JSON.stringify(listDuring?.fresh.outcomes)}.`,
        ]
      : []),
    `load (1 min) ${loadStart.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}.`,
  );
} catch (error) {
  say(`failed: ${error instanceof Error ? error.stack : String(error)}`);
  notes.push(`FAILED: ${String(error)}`);
  process.exitCode = 1;
} finally {
  await stopProbe?.().catch(() => {});
  for (const farm of farms) farm.process.kill("SIGKILL");
  if (gateway) {
    gateway.process.send("stop");
    await Promise.race([new Promise((resolve) => gateway!.process.once("exit", resolve)), sleep(5_000)]);
    gateway.process.kill("SIGKILL");
  }
  for (const close of closing) await close().catch(() => {});
  await admin.end({ timeout: 2 }).catch(() => {});
  await db.stop().catch(() => {});
}
const name = `idle-desktops-${N}`;
await report(name, `${db.server}, pg_stat_statements`, rows, notes);
// The table's file, with the run's settings and its timelines and counts beside.
const file = new URL(`../../results/${name}.json`, import.meta.url);
const written = JSON.parse(await readFile(file, "utf8"));
const settings = { N, LITE, PER_MEMBER, PER_FARM, OPEN_RATE, BASE_S, SETTLE_S, IDLE_S, PROBES, STORM, LIST_BASE_S, ...connectionLimits };
await writeFile(file, `${JSON.stringify({ ...written, settings, detail }, null, 2)}\n`);
process.exit(process.exitCode ?? 0);

/** The kernel's TCP counters that say why connections fail (the machine's, since boot; `nstat` of iproute2, empty without it). */
function tcpCounters(): Record<string, number> {
  const wanted = /^(TcpExtListenOverflows|TcpExtListenDrops|TcpExtSyncookiesSent|TcpOutRsts|TcpEstabResets|TcpExtTCPAbortOnData|TcpExtTCPAbortOnClose)$/;
  try {
    const counters: Record<string, number> = {};
    for (const line of execFileSync("nstat", ["-asz"], { encoding: "utf8" }).split("\n")) {
      const [name, value] = line.trim().split(/\s+/);
      if (name && wanted.test(name)) counters[name] = Number(value);
    }
    return counters;
  } catch {
    return {};
  }
}

function sumStats(stats: FarmStats[]): FarmStats {
  return {
    requests: sumOf(stats.map((s) => s.requests)),
    statuses: sumOf(stats.map((s) => s.statuses)),
    warns: sumOf(stats.map((s) => s.warns)),
    started: stats.reduce((n, s) => n + s.started, 0),
    rss: stats.reduce((n, s) => n + s.rss, 0),
  };
}
