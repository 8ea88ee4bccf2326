import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PNPM = join(ROOT, ".tools", "node_modules", ".bin", "pnpm");

/** A folder outside the workspace with the packed packages and their peers installed by npm. */
export interface ConsumerFolder {
  dir: string;
  /** Runs `node` with these arguments in the folder (the environment given, no npm or pnpm variables). */
  node(args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

const listed = async (file: string) =>
  (await readFile(new URL(`../${file}`, import.meta.url), "utf8")).split("\n").filter((line) => line && !line.startsWith("#"));
const nameOf = (spec: string) => spec.slice(0, spec.lastIndexOf("@"));

/** Pinned third-party versions, as the cache lists name them (`zod@4.6.7`), keyed by package name. */
async function cachedVersions(): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  // The extra list comes last: its versions (other compatible ones) are what consumers install.
  for (const spec of [...(await listed("cache-packages.txt")), ...(await listed("cache-extra.txt"))]) versions.set(nameOf(spec), spec);
  return versions;
}

/** What the consumers install of `name` (`zod@4.3.6`): the extra list's version if it has one, else the pinned one. */
export async function hostSpec(name: string): Promise<string> {
  const spec = (await cachedVersions()).get(name);
  if (!spec) throw new Error(`${name} is not in tools/consumers/cache-*.txt`);
  return spec;
}

/**
 * The packages of the extra list that `packages` (folder names) require as peers (not optional
 * ones): npm would install them anyway, at the newest version it knows; naming them installs the
 * extra list's version (the host's pin) instead.
 */
async function requiredExtraPeers(packages: string[]): Promise<string[]> {
  const extra = new Set((await listed("cache-extra.txt")).map(nameOf));
  const peers = new Set<string>();
  for (const name of packages) {
    const manifest = JSON.parse(await readFile(join(ROOT, "packages", name, "package.json"), "utf8")) as {
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) if (extra.has(peer) && !manifest.peerDependenciesMeta?.[peer]?.optional) peers.add(peer);
  }
  return [...peers];
}

/** The environment without what a pnpm-run test inherits (npm_config_*, npm_package_*): npm must see only its defaults. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_|^pnpm_|^PNPM_/i.test(key)));
  return { ...env, ...extra };
}

/** `pnpm pack` of packages/<name> into `into` (pnpm turns `workspace:^` into the real version). */
async function pack(name: string, into: string): Promise<string> {
  const before = new Set(await readdir(into));
  await run(PNPM, ["pack", "--pack-destination", into], { cwd: join(ROOT, "packages", name), env: cleanEnv() });
  const made = (await readdir(into)).filter((file) => !before.has(file) && file.endsWith(".tgz"));
  if (made.length !== 1) throw new Error(`pnpm pack of ${name} made ${made.length} tarballs`);
  return join(into, made[0]!);
}

/** What a host with both targets and the capability installs (folder names, dependencies first). */
export const CAPABILITY_WITH_TARGETS = [
  "remote-session-core",
  "runner-protocol",
  "desktop-target",
  "opencode-client",
  "cloud-target",
  "mcp-app-card",
  "mcp-capability",
];

/**
 * Packs `packages` (folder names under packages/) and installs them with npm, offline, in a fresh
 * folder of the system temp dir, beside `thirdParty` (package names; the versions come from the
 * cache lists), and beside the extra list's version of every peer they require (the host's pin, in
 * place of the newest npm would pick). Nothing of the workspace is reachable from there: Node
 * resolves every import from the folder's own node_modules.
 */
export async function installConsumer(packages: string[], thirdParty: string[]): Promise<ConsumerFolder> {
  const dir = await mkdtemp(join(tmpdir(), "openwork-consumer-"));
  const tarballs = join(dir, ".tarballs");
  await mkdir(tarballs);
  const files: string[] = [];
  for (const name of packages) files.push(await pack(name, tarballs));
  const versions = await cachedVersions();
  const named = [...thirdParty, ...(await requiredExtraPeers(packages)).filter((peer) => !thirdParty.includes(peer))];
  const specs = named.map((name) => versions.get(name) ?? `${name} (not in tools/consumers/cache-*.txt)`);
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
  const args = ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", ...files, ...specs];
  await run("npm", args, { cwd: dir, env: cleanEnv() }).catch((error: { stderr?: string }) => {
    throw new Error(`npm install --offline failed (is npm's cache filled? source scripts/pnpm.sh does it):\n${error.stderr ?? String(error)}`);
  });
  return {
    dir,
    // A bound on every run, so a host that hangs fails with what it printed instead of a test timeout.
    node: (nodeArgs, env) => run(process.execPath, nodeArgs, { cwd: dir, env: cleanEnv(env), maxBuffer: 16 * 1024 * 1024, timeout: 60_000 }),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Every installed copy of `name` in the folder's node_modules tree, as `path@version`. */
export async function installedCopies(dir: string, name: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (modules: string): Promise<void> => {
    const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const names = entry.name.startsWith("@")
        ? (await readdir(join(modules, entry.name), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => `${entry.name}/${e.name}`)
        : [entry.name];
      for (const packageName of names) {
        const at = join(modules, packageName);
        if (packageName === name) found.push(`${at}@${JSON.parse(await readFile(join(at, "package.json"), "utf8")).version}`);
        await walk(join(at, "node_modules"));
      }
    }
  };
  await walk(join(dir, "node_modules"));
  return found;
}
