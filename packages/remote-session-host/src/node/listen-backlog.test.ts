import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { expect, it } from "vitest";
import { listenWithLimits, sizeConnectionLimits } from "./connection-limits.js";

/** The accept queue the kernel gave a listening port (`ss`'s Send-Q of a listening socket). */
function acceptQueueOf(port: number): number {
  const line = execFileSync("ss", ["-ltnH", `sport = :${port}`], { encoding: "utf8" }).trim();
  return Number(line.split(/\s+/)[2]);
}

it("listens with the sized backlog (the kernel caps it at somaxconn), not Node's 511", async () => {
  const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
  const limits = sizeConnectionLimits({ fileLimit: 20_000, heapLimitBytes: 4 * 1024 ** 3 });
  expect(limits.listenBacklog).toBe(limits.maxConnections + limits.maxStreams);
  const server = createServer();
  const { port } = await listenWithLimits(server, { port: 0, host: "127.0.0.1" }, limits);
  try {
    expect(acceptQueueOf(port)).toBe(Math.min(limits.listenBacklog, somaxconn));
    expect(acceptQueueOf(port)).toBeGreaterThan(511);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it("rejects with listen's error when the port is taken", async () => {
  const first = createServer();
  const { port } = await listenWithLimits(first, { port: 0, host: "127.0.0.1" }, { listenBacklog: 1_024 });
  try {
    await expect(listenWithLimits(createServer(), { port, host: "127.0.0.1" }, { listenBacklog: 1_024 })).rejects.toMatchObject({ code: "EADDRINUSE" });
  } finally {
    await new Promise((resolve) => first.close(resolve));
  }
});
