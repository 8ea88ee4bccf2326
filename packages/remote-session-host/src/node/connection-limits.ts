import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerOptions } from "node:http";
import type { AddressInfo } from "node:net";
import { getHeapStatistics } from "node:v8";
import { runnerStreamsForHeap } from "../process-limits.js";
import { createConnectionShare } from "./connection-share.js";

/** What one process accepts before it answers 503, and how long a client may take to send its headers. */
export interface ConnectionLimits {
  /** Open connections of requests (MCP calls, runner requests, pages); wake streams are not counted. */
  maxConnections: number;
  /**
   * Runner wake streams held at once, apart from `maxConnections`: what the host's
   * `processLimits.runnerStreams` is given, so streams and requests together stay within the
   * process's file limit.
   */
  maxStreams: number;
  /**
   * Connections one credential may hold when the process is full before its own are closed to
   * admit others. Default an eighth of `maxConnections`.
   */
  sharePerCredential?: number;
  /** Time to receive a request's headers. Default 10 s. */
  headersTimeoutMs: number;
  /** Idle time of a kept-alive connection between requests. Default 5 s. */
  keepAliveTimeoutMs: number;
  /**
   * Connections the kernel queues for the process to accept (`listen`'s backlog): what a fleet
   * reconnecting at once (a restart) arrives as. Node's own 511 drops the rest, and a dropped
   * connection's client waits its kernel's retransmits (1, 3, 7 … 63 s) before it is even heard,
   * so a storm takes minutes. Sized as every connection the process may hold; Linux caps it at
   * `net.core.somaxconn` (4 096 by default).
   */
  listenBacklog: number;
}

/** What a process may open: its file limit (null when unknown: no limit is assumed) and its heap limit. */
export interface ProcessResources {
  fileLimit: number | null;
  heapLimitBytes: number;
}

// Descriptors kept for everything that is not a client's connection: the database pool, the
// LISTEN connection, files, outgoing calls.
const RESERVED_FILES = 256;
const MAX_REQUEST_CONNECTIONS = 4_096;
const MIN_REQUEST_CONNECTIONS = 256;
// What `listen` takes (the kernel caps it lower anyway).
const MAX_LISTEN_BACKLOG = 65_535;

/** This process's soft limit of open files (Linux: `/proc/self/limits`) and its heap limit. */
export function readProcessResources(): ProcessResources {
  return { fileLimit: readFileLimit(), heapLimitBytes: getHeapStatistics().heap_size_limit };
}

function readFileLimit(): number | null {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    return soft === undefined || soft === "unlimited" || !/^\d+$/.test(soft) ? null : Number(soft);
  } catch {
    return null;
  }
}

/**
 * Limits sized by what the process may hold, not fixed: requests get a thirty-second of the usable
 * files (256 to 4 096), wake streams the rest, at most what half the heap holds
 * (`runnerStreamsForHeap`), and the listen backlog both. With 20 000 files and a 4 GiB heap: 617
 * request connections and 19 127 streams; with 1 048 576 files: 4 096 and 65 536.
 */
export function sizeConnectionLimits(resources: ProcessResources = readProcessResources()): ConnectionLimits {
  const usable = resources.fileLimit === null ? Number.POSITIVE_INFINITY : Math.max(0, resources.fileLimit - RESERVED_FILES);
  const maxConnections = Math.min(MAX_REQUEST_CONNECTIONS, Math.max(MIN_REQUEST_CONNECTIONS, Math.floor(usable / 32)));
  const maxStreams = Math.max(1, Math.min(runnerStreamsForHeap(resources.heapLimitBytes), usable - maxConnections));
  const listenBacklog = Math.min(MAX_LISTEN_BACKLOG, maxConnections + maxStreams);
  return { maxConnections, maxStreams, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, listenBacklog };
}

const BUSY = JSON.stringify({ error: "server_busy", message: "this gateway process has too many open connections; retry shortly" });

/** The `node:http` server options that enforce the limits' timeouts (pass them when creating the server). */
export function serverOptionsOf(limits: Pick<ConnectionLimits, "headersTimeoutMs" | "keepAliveTimeoutMs">): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.headersTimeoutMs * 3,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node enforces the two timeouts above only as often as it checks (30 s by default).
    connectionsCheckingInterval: Math.min(limits.headersTimeoutMs / 2, 5_000),
  };
}

/**
 * Listens on `host:port` (port 0: a free one) with the limits' backlog, and resolves once the
 * server listens (rejects with `listen`'s error: the port taken, the address not this machine's).
 * A host's own `server.listen(port)` queues Node's default 511 connections.
 */
export function listenWithLimits(
  server: Server,
  address: { port: number; host: string },
  limits: Pick<ConnectionLimits, "listenBacklog">,
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    server.listen({ port: address.port, host: address.host, backlog: limits.listenBacklog }, () => {
      server.off("error", failed);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** A runner's wake stream (`GET …/events` of either runner channel): held for hours, counted apart from requests. */
export function isRunnerWakeStream(request: Pick<IncomingMessage, "method" | "url">): boolean {
  if (request.method !== "GET" || !request.url) return false;
  const path = request.url.split("?", 1)[0]!;
  return path.endsWith("/desktop-runner/events") || path.endsWith("/automation-runners/events");
}

/**
 * Holds `server` to `limits.maxConnections` requests' connections: a new connection at the cap
 * takes the slot of a connection that has sent no whole request yet (idle, slow headers), else of
 * one of the credential holding the most connections past its share; only when there is neither
 * is it answered 503 and closed. So a flood of sockets, slow headers, slow bodies or streams costs
 * the one flooding, not every other member. Wake streams (`isStream`, default
 * `isRunnerWakeStream`) leave the count once their request is read: their budget is the host's
 * (`processLimits.runnerStreams`, given `limits.maxStreams`), and the stream slots no stream holds
 * are lent to requests (a fleet reconnecting after a restart arrives as new connections first).
 * Returns the share's counts.
 */
export function limitConnections(
  server: Server,
  limits: Pick<ConnectionLimits, "maxConnections" | "sharePerCredential"> & Partial<Pick<ConnectionLimits, "maxStreams">>,
  options: { isStream?: (request: IncomingMessage) => boolean } = {},
) {
  const share = createConnectionShare({
    maxConnections: limits.maxConnections,
    ...(limits.maxStreams === undefined ? {} : { maxStreams: limits.maxStreams }),
    sharePerCredential: limits.sharePerCredential ?? Math.max(1, Math.floor(limits.maxConnections / 8)),
    isStream: options.isStream ?? isRunnerWakeStream,
  });
  server.on("connection", (socket) => {
    if (share.admit(socket)) return;
    socket.end(
      `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${BUSY.length}\r\n\r\n${BUSY}`,
    );
  });
  server.on("request", (request, response) => share.request(request, response));
  return { stats: share.stats };
}
