import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { useTestDatabase } from "@openwork/test-postgres";
import { build } from "esbuild";
import { afterAll, beforeAll, expect, it } from "vitest";

const run = promisify(execFile);
const db = useTestDatabase();
const packageDir = fileURLToPath(new URL("..", import.meta.url));
let folder: string;

// A host that bundles its server: one file, nothing of ours beside it.
const HOST = `
  import postgres from "postgres";
  import { migrateDesktopTarget } from "@openwork/desktop-target";
  const sql = postgres(process.env.DATABASE_URL, { max: 2, onnotice: () => {} });
  try {
    console.log(JSON.stringify(await migrateDesktopTarget(sql)));
  } finally {
    await sql.end({ timeout: 5 });
  }`;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "openwork-bundled-host-"));
  await build({
    stdin: { contents: HOST, resolveDir: packageDir, loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: join(folder, "host.mjs"),
    logLevel: "silent",
  });
}, 60_000);

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

it("migrates from a host bundled with esbuild: the SQL travels inside the bundle", async () => {
  const migrateOnce = async () => {
    const { stdout } = await run(process.execPath, [join(folder, "host.mjs")], { cwd: folder, env: { PATH: process.env.PATH, DATABASE_URL: db.current.url } });
    return JSON.parse(stdout) as { applied: string[] };
  };
  const first = await migrateOnce();
  expect(first.applied).toEqual(expect.arrayContaining(["0001_session_ledger.sql", "0002_owner_is_user.sql", "0001_desktop_tasks.sql"]));
  expect((await migrateOnce()).applied).toEqual([]);
  const [tables] = await db.current.sql`select to_regclass('remote_session') as ledger, to_regclass('desktop_task') as tasks`;
  expect(tables).toEqual({ ledger: "remote_session", tasks: "desktop_task" });
});

it("ships the SQL files embedded, exactly as they are", async () => {
  const { renderMigrations } = (await import(new URL("../../../scripts/embed-sql.mjs", import.meta.url).href)) as { renderMigrations(folder: string): string };
  const generated = await readFile(new URL("sql-migrations.generated.ts", import.meta.url), "utf8");
  expect(generated).toBe(renderMigrations(join(packageDir, "sql")));
});
