import { execFile } from "node:child_process";
import { chmod, cp, mkdtemp, readdir, readlink, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { copyWithin, packagedBinaries, reachableBinaries, reachableBy, type RunAs, runAs } from "@openwork/embedded-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
let folder: string;
let stagingRoot: string;
let user: RunAs;

beforeAll(async () => {
  // A folder no other user may enter, like a clone under /root or a `mktemp -d` folder.
  folder = await mkdtemp(join(tmpdir(), "openwork-private-"));
  await chmod(folder, 0o700);
  // Copies go to a folder of this test's own, so no run shares (or is spoiled by) another's.
  stagingRoot = await mkdtemp(join(tmpdir(), "openwork-staging-"));
  await chmod(stagingRoot, 0o755);
  user = (await runAs()) ?? { uid: process.getuid!() + 1, gid: process.getgid!() + 1 };
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await rm(stagingRoot, { recursive: true, force: true });
});

/**
 * The packaged binaries as a first install leaves them, inside `into`: the libraries' version
 * names as links — relative ones (`libicuuc.so.60 -> libicuuc.so.60.2`, as the install step writes
 * them) and absolute ones (`libicuuc.so -> /…/libicuuc.so.60.2`). A warm package store hands out
 * plain files instead, so the links are made here whatever the store gave.
 */
async function nativeAsFirstInstalled(into: string, version: string) {
  const packaged = await packagedBinaries();
  const native = join(into, "native");
  await cp(dirname(dirname(packaged.initdb)), native, { recursive: true, dereference: true });
  const lib = join(native, "lib");
  const links = { relative: 0, absolute: 0 };
  for (const name of await readdir(lib)) {
    const match = /^(.+\.so)\.(\d+)\.\d+$/.exec(name);
    if (!match) continue;
    const [, base, major] = match;
    const names = await readdir(lib);
    if (names.includes(`${base}.${major}`)) {
      await unlink(join(lib, `${base}.${major}`));
      await symlink(name, join(lib, `${base}.${major}`));
      links.relative++;
    }
    if (names.includes(base!)) {
      await unlink(join(lib, base!));
      await symlink(join(lib, name), join(lib, base!));
      links.absolute++;
    }
  }
  return { binaries: { initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres"), version }, links };
}

/** Every link below `root` and where it really leads. */
async function linksBelow(root: string): Promise<{ link: string; leadsTo: string | null }[]> {
  const found: { link: string; leadsTo: string | null }[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isSymbolicLink()) continue;
    const link = join(entry.parentPath, entry.name);
    found.push({ link, leadsTo: await realpath(link).catch(() => null) });
  }
  return found;
}

async function versionAsServerUser(program: string): Promise<string> {
  // As the postgres user, from the private folder as working directory.
  const command = isRoot ? ["runuser", ["-u", "postgres", "--", program, "--version"]] : [program, ["--version"]];
  return (await run(command[0] as string, command[1] as string[], { cwd: isRoot ? folder : "/" })).stdout;
}

// Both staging tests copy the packaged binaries (tens of megabytes) and run them as another user:
// seconds on a loaded machine, more than the default 5 s (CI saw 5 s pass during a full run).
it("stages binaries whose libraries are relative and absolute links, from a private folder, into a copy that links only inside itself", async () => {
  const { binaries, links } = await nativeAsFirstInstalled(join(folder, "first"), "first-install-test");
  expect(links.relative).toBeGreaterThan(0);
  expect(links.absolute).toBeGreaterThan(0);
  expect(await reachableBy(binaries.initdb, user)).toBe(false);
  const staged = await reachableBinaries(binaries, user, { stagingRoot });
  expect(staged.initdb).not.toBe(binaries.initdb);
  expect(await reachableBy(staged.initdb, user)).toBe(true);
  const copy = dirname(dirname(staged.initdb));
  const copied = await linksBelow(copy);
  expect(copied.length).toBeGreaterThan(0);
  for (const { link, leadsTo } of copied) {
    expect(leadsTo, link).not.toBeNull();
    expect(relative(copy, leadsTo!).startsWith(".."), `${link} -> ${await readlink(link)}`).toBe(false);
  }
  expect(await versionAsServerUser(staged.initdb)).toMatch(/initdb \(PostgreSQL\) 18/);
  expect(await versionAsServerUser(staged.postgres)).toMatch(/PostgreSQL\) 18/);
}, 60_000);

it("replaces a staged copy that no longer runs (its links lead into a checkout since deleted) instead of trusting its marker", async () => {
  const { binaries } = await nativeAsFirstInstalled(join(folder, "second"), "dangling-test");
  const copy = join(stagingRoot, `openwork-postgres-dangling-test-${process.platform}-${process.arch}`);
  // What the old staging left once its checkout was gone: complete, marked, and broken.
  await copyWithin(dirname(dirname(binaries.initdb)), copy);
  const libicu = (await readdir(join(copy, "lib"))).find((name) => /^libicuuc\.so\.\d+$/.test(name))!;
  await unlink(join(copy, "lib", libicu));
  await symlink(join(folder, "deleted-checkout", "lib", libicu), join(copy, "lib", libicu));
  await writeFile(join(copy, ".complete"), "");
  await expect(run(join(copy, "bin", "initdb"), ["--version"])).rejects.toThrow(/libicuuc/);

  const staged = await reachableBinaries(binaries, user, { stagingRoot });
  expect(dirname(dirname(staged.initdb))).toBe(copy);
  expect(await versionAsServerUser(staged.initdb)).toMatch(/initdb \(PostgreSQL\) 18/);
  expect((await linksBelow(copy)).every(({ leadsTo }) => leadsTo !== null)).toBe(true);
}, 60_000);

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
