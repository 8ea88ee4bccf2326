import { execFile } from "node:child_process";
import { chmod, cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { packagedBinaries, reachableBinaries, reachableBy, runAs } from "@openwork/embedded-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";

const run = promisify(execFile);
let folder: string;

beforeAll(async () => {
  // A folder no other user may enter, like a clone under /root or a `mktemp -d` folder.
  folder = await mkdtemp(join(tmpdir(), "openwork-private-"));
  await chmod(folder, 0o700);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

it("runs the server's programs from a copy the postgres user can reach when the checkout is private", async () => {
  const user = (await runAs()) ?? { uid: process.getuid!() + 1, gid: process.getgid!() + 1 };
  const packaged = await packagedBinaries();
  const privateNative = join(folder, "native");
  await cp(dirname(dirname(packaged.initdb)), privateNative, { recursive: true });
  const hidden = { initdb: join(privateNative, "bin", "initdb"), postgres: join(privateNative, "bin", "postgres"), version: `${packaged.version}-test` };
  expect(await reachableBy(hidden.initdb, user)).toBe(false);
  const staged = await reachableBinaries(hidden, user);
  expect(staged.initdb).not.toBe(hidden.initdb);
  expect(await reachableBy(staged.initdb, user)).toBe(true);
  if (process.getuid?.() === 0) {
    // As the postgres user, from the private folder as working directory: it still runs.
    const { stdout } = await run("runuser", ["-u", "postgres", "--", staged.postgres, "--version"], { cwd: folder });
    expect(stdout).toMatch(/PostgreSQL\) 18/);
  }
  await rm(dirname(dirname(staged.initdb)), { recursive: true, force: true });
});

it("starts the embedded server from a private working folder", async () => {
  const script = `
    const { startEmbeddedPostgres } = await import(${JSON.stringify(new URL("../../embedded-postgres/dist/index.js", import.meta.url).href)});
    const server = await startEmbeddedPostgres();
    console.log(server.url);
    await server.stop();
    process.exit(0);`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: folder, timeout: 60_000 });
  expect(stdout).toMatch(/^postgres:\/\/postgres:test@127\.0\.0\.1:\d+\/postgres/);
}, 90_000);

