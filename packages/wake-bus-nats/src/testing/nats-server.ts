import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";

/** A nats-server process on 127.0.0.1 that a test can kill and start again on the same port. */
export interface NatsServer {
  url: string;
  /** SIGKILL: clients see the connection drop, nothing is flushed. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after `kill`). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

const CANDIDATES = ["nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];

/** The nats-server executable (`NATS_SERVER`, then PATH and Debian's places), or null. */
export function findNatsServer(): string | null {
  const dirs = (process.env.PATH ?? "").split(":").filter(Boolean);
  const paths = [process.env.NATS_SERVER, ...CANDIDATES.flatMap((c) => (c.startsWith("/") ? [c] : dirs.map((d) => `${d}/${c}`)))].filter(
    (p): p is string => !!p,
  );
  return (
    paths.find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }) ?? null
  );
}

/** Starts Debian's nats-server (`apt-get install nats-server`) on a free port; resolves once it accepts clients. */
export async function startNatsServer(): Promise<NatsServer> {
  const executable = findNatsServer();
  if (!executable) throw new Error("nats-server is not installed: apt-get install nats-server (or set NATS_SERVER)");
  // -1: the server picks a free port the first time; later starts take the same one again.
  let port = -1;
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn(executable, ["-a", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = "";
      started.stderr!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(output);
        if (listening) port = Number(listening[1]);
        if (output.includes("Server is ready")) resolve();
      });
      started.once("exit", (code) => reject(new Error(`nats-server exited (${code}) before it was ready: ${output.trim()}`)));
    });
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGKILL");
    });
  };
  await start();
  return { url: `nats://127.0.0.1:${port}`, kill, start, stop: kill };
}
