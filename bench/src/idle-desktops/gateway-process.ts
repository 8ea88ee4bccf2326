// The idle-desktops bench's gateway in a process of its own, so its CPU can be read from /proc apart
// from the desktops' and the controller's: the reference gateway's wiring (serveGateway, a pool of
// 10 as apps/gateway/src/main.ts) for `members` generated members (benchMember). Its connection limits are what
// serveGateway sizes from this process's open-file limit (sizeConnectionLimits) unless the
// controller passes `connectionLimits` (MAX_CONNECTIONS, MAX_STREAMS). controller.ts forks it
// with a GatewayStart; it answers a GatewayStarted once serving, then the commands it is sent.
import { subscribe } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { getHeapStatistics } from "node:v8";
import { serveGateway } from "@openwork/gateway";
import postgres from "postgres";
import { startProfile } from "../cpu-profile.js";
import { BENCH_RUNNER_SECRET, benchMember } from "../gateway-fixture.js";

/** sizeConnectionLimits()'s answer (@openwork/remote-session-host/node), or what was given. */
type ConnectionLimits = Awaited<ReturnType<typeof serveGateway>>["connectionLimits"];

export interface GatewayStart {
  databaseUrl: string;
  members: number;
  /** 0: a free one. A restart passes the port of the process it replaces. */
  port: number;
  connectionLimits?: Partial<ConnectionLimits>;
}

export interface GatewayStarted {
  baseUrl: string;
  mcpUrl: string;
  connectionLimits: ConnectionLimits;
  /** This process's open-file limit (/proc/self/limits), soft and hard. */
  fileLimit: { soft: string; hard: string };
  heapLimitMiB: number;
}

/** What the gateway holds now (no GC: cheap enough to ask every few hundred ms). */
export interface GatewayCount {
  /** `hub.stats().runnerStreams`: wake streams held. */
  streams: number;
  /** `connections()`: request connections, those with no whole request yet, the credentials holding them, wake streams, and so far the connections refused at the cap and those ended for a newer one. */
  connections: { open: number; unidentified: number; credentials: number; streams: number; refused: number; evicted: number };
}

/** The count, and the memory after a forced GC, and what the gateway logged (warnings and errors, by message). */
export interface GatewayStats extends GatewayCount {
  rss: number;
  heapUsed: number;
  logged: Record<string, number>;
}

/** "drop" ends every wake stream's connection (answers how many, and the streams held after). */
export type GatewayCommand = "count" | "stats" | "drop" | "stop" | { profile: "start" | string };

/** The process's open-file limit, soft and hard, as /proc/self/limits says it. */
function fileLimit(): { soft: string; hard: string } {
  const line = readFileSync("/proc/self/limits", "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const [soft = "?", hard = "?"] = line?.slice("Max open files".length).trim().split(/\s+/) ?? [];
  return { soft, hard };
}

// Every connection that carries a wake stream (`GET …/events`), so "drop" can end them all as a
// replica restart would, while the process (and its measures) goes on.
const streamSockets = new Set<Socket>();
subscribe("http.server.request.start", (message) => {
  const { request, socket } = message as { request: IncomingMessage; socket: Socket };
  const path = (request.url ?? "").split("?", 1)[0]!;
  if (request.method !== "GET" || !path.endsWith("/events") || streamSockets.has(socket)) return;
  streamSockets.add(socket);
  socket.once("close", () => streamSockets.delete(socket));
});

const send = (message: unknown) => new Promise((resolve) => process.send!(message, resolve));

process.once("message", async (message) => {
  const start = message as GatewayStart;
  const members = Array.from({ length: start.members }, (_, i) => benchMember(i));
  const logged: Record<string, number> = {};
  const log = (line: string, fields?: Record<string, unknown>) => {
    const key = `${line}${fields?.code ? ` ${String(fields.code)}` : ""}`.slice(0, 100);
    logged[key] = (logged[key] ?? 0) + 1;
  };
  const sql = postgres(start.databaseUrl, { max: 10, onnotice: () => {}, connect_timeout: 10 });
  const gateway = await serveGateway({
    sql,
    port: start.port,
    members: () => members,
    cloudEnabled: () => false,
    runnerTokenSecret: BENCH_RUNNER_SECRET,
    createRateLimit: { bucket: "create", limit: 1_000_000, windowMs: 60_000 },
    ...(start.connectionLimits ? { connectionLimits: start.connectionLimits } : {}),
    logger: { info: () => {}, warn: log, error: log },
  });
  let stopProfile: ((file: string) => Promise<void>) | undefined;
  const count = (): GatewayCount => ({ streams: gateway.hub.stats().runnerStreams, connections: gateway.connections() });
  process.on("message", async (command: GatewayCommand) => {
    if (command === "stop") {
      await gateway.close().catch(() => {});
      await sql.end({ timeout: 5 }).catch(() => {});
      process.exit(0);
    }
    if (command === "count") return void (await send(count()));
    if (command === "stats") {
      (globalThis as { gc?: () => void }).gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      return void (await send({ ...count(), rss, heapUsed, logged } satisfies GatewayStats));
    }
    if (command === "drop") {
      const dropped = streamSockets.size;
      for (const socket of streamSockets) socket.destroy();
      // The streams' ends run on the sockets' close events: let them, so the answer's count is after the drop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return void (await send({ dropped, streams: gateway.hub.stats().runnerStreams }));
    }
    if (command.profile === "start") {
      stopProfile = await startProfile();
      return void (await send({ profiling: true }));
    }
    await stopProfile?.(command.profile);
    await send({ wrote: command.profile });
  });
  await send({
    baseUrl: gateway.baseUrl,
    mcpUrl: gateway.mcpUrl,
    connectionLimits: gateway.connectionLimits,
    fileLimit: fileLimit(),
    heapLimitMiB: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
  } satisfies GatewayStarted);
});
