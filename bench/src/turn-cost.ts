// The cost of a real streaming turn: the reference desktop runner (a process of its own) drives a
// real opencode whose model types a reply word by word after a tool call (todowrite), and the
// gateway serves the create and one waiting read per turn. Per turn: the runner's requests to the
// gateway (by route), the statements the gateway sent PostgreSQL, and the server's CPU (the gateway
// process and the PostgreSQL cluster). Beside it, in the same run, the same turns with the runner
// posting as it did before coalescing (a post every 20 ms while the turn streams).
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startRealOpencode } from "@openwork/real-opencode";
import { type Coalescing, DEFAULT_COALESCING } from "@openwork/runner-protocol/client";
import { benchGateway, member } from "./gateway-fixture.js";
import { benchDatabase, report } from "./harness.js";
import { clusterCpuMs, cpuMsSince, postmasterOf } from "./process-cpu.js";

const TURNS = Number(process.env.TURNS ?? 10);
const PROMPT = "TODO STREAM write the plan";

type Counts = { counts: Record<string, number>; cpu: NodeJS.CpuUsage };
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([route, n]) => [route, n - (before[route] ?? 0)])
      .filter(([, n]) => (n as number) > 0),
  );

const db = await benchDatabase("turn-cost");
const opencode = await startRealOpencode();
const rows: Record<string, Record<string, unknown>> = {};
let statements = 0;
try {
  const fixture = await benchGateway(db.url, {}, () => void statements++);
  const postmaster = await postmasterOf(fixture.sql);
  const measure = async (label: string, runnerId: string, coalescing: Coalescing) => {
    const runner = fork(fileURLToPath(new URL("./turn-runner-process.ts", import.meta.url)), { execArgv: ["--import", "tsx"] });
    const ask = <T>(request: unknown) =>
      new Promise<T>((resolve) => {
        runner.once("message", (answer) => resolve(answer as T));
        runner.send(request as never);
      });
    await ask({
      gatewayUrl: fixture.gateway.baseUrl,
      memberToken: member.sessionToken,
      runnerId,
      opencode: { url: opencode.url, directory: opencode.directory },
      coalescing,
    });
    const turn = async (i: number) => {
      const created = await fixture.execute("remote-session:create", { target: "desktop", runner: runnerId, title: `turn ${i}`, prompt: PROMPT });
      if (created.isError) throw new Error(JSON.stringify(created.structuredContent));
      const { sessionId } = created.structuredContent as { sessionId: string };
      for (;;) {
        const read = await fixture.execute("remote-session:read", { sessionId, waitMs: 20_000, from: "end" });
        const state = (read.structuredContent as { state: string }).state;
        if (state === "idle") return read.structuredContent as { finalAssistantText?: string };
        if (!["queued", "running"].includes(state)) throw new Error(`turn ${i} ended ${state}`);
      }
    };
    await turn(-1); // the engine's first session (its start-up) is not a turn's cost
    const before = await ask<Counts>("counts");
    const statementsBefore = statements;
    const gatewayStart = process.cpuUsage();
    const clusterStart = clusterCpuMs(postmaster);
    const t0 = performance.now();
    for (let i = 0; i < TURNS; i++) {
      const { finalAssistantText } = await turn(i);
      if (!finalAssistantText?.includes("FAKE_REPLY")) throw new Error(`turn ${i} answered ${finalAssistantText}`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const gatewayMs = cpuMsSince(gatewayStart);
    const clusterMs = clusterCpuMs(postmaster) - clusterStart;
    const after = await ask<Counts>("counts");
    const exited = new Promise((resolve) => runner.once("exit", resolve));
    runner.send("stop");
    await exited;
    const routes = minus(after.counts, before.counts);
    const runnerMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
    const per = (n: number) => +(n / TURNS).toFixed(1);
    rows[label] = {
      turns: TURNS,
      "s/turn": +(seconds / TURNS).toFixed(2),
      "runner requests/turn": per(sum(routes)),
      "by route": Object.entries(routes)
        .map(([route, n]) => `${route} ${per(n as number)}`)
        .join(", "),
      "statements/turn": per(statements - statementsBefore),
      "server CPU ms/turn": +((gatewayMs + clusterMs) / TURNS).toFixed(1),
      "runner CPU ms/turn (its desktop's)": +(runnerMs / TURNS).toFixed(1),
    };
  };
  await measure("baseline: a post every 20 ms while the turn streams", "bench-turn-before", { windowMs: 20, maxWindowMs: 20 });
  await measure("coalesced, first window 100 ms (the default before), doubling to 1 s", "bench-turn-coalesced-100", { windowMs: 100, maxWindowMs: 1_000 });
  await measure(
    `coalesced (the default: first window ${DEFAULT_COALESCING.windowMs} ms, doubling to ${DEFAULT_COALESCING.maxWindowMs / 1000} s)`,
    "bench-turn-coalesced",
    DEFAULT_COALESCING,
  );
  await fixture.close();
} finally {
  await opencode.stop();
  await db.stop();
}
await report("turn-cost", db.server, rows, [
  `each turn: remote-session:create on a named desktop with "${PROMPT}" (the fake model calls todowrite, then types its reply a word every 20 ms for about a second), then waiting reads until idle; the create and reads run on the capability in this process (the gateway's), the runner is the reference desktop runner in a process of its own driving opencode (tools/real-opencode).`,
  "runner requests: every request the runner sent the gateway during the turns (the wake stream is opened once, before). Statements: what the gateway's PostgreSQL client sent (create, read, and the runner's requests). Server CPU: this process plus the PostgreSQL cluster, from /proc.",
]);
process.exit(0);
