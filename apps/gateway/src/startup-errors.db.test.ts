import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@openwork/embedded-postgres";
import { useTestDatabase } from "@openwork/test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";

const run = promisify(execFile);
const db = useTestDatabase();
const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));
let home: string;
// Roles are shared by the whole server: a name of this run's own, dropped at the end.
const role = `openwork_limited_${process.pid}`;
const databaseName = () => new URL(db.current.url).pathname.slice(1);

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "openwork-startup-"));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await db.current.sql.unsafe(`revoke connect on database "${databaseName()}" from ${role}; drop role if exists ${role}`).catch(() => {});
});

/** Starts the gateway as `npm start` does and returns what it printed on stderr when it gave up. */
async function startWith(databaseUrl: string, extra: Record<string, string> = {}): Promise<string> {
  const env = { PATH: process.env.PATH, DATABASE_URL: databaseUrl, START_RUNNER: "0", PORT: "0", DEV_CONFIG: join(home, "gateway.json"), ...extra };
  const outcome = await run(process.execPath, [main], { env, timeout: 60_000 }).then(
    () => ({ code: 0, stderr: "" }),
    (error: { code: number; stderr: string }) => error,
  );
  expect(outcome.code).toBe(1);
  return outcome.stderr;
}

it("names DATABASE_URL in one line when PostgreSQL cannot be reached", async () => {
  const stderr = await startWith(`postgres://nobody:secret-password@127.0.0.1:${await freePort()}/nothing`);
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).toMatch(/^gateway failed to start: DATABASE_URL: cannot reach PostgreSQL/);
  expect(stderr).not.toContain("secret-password");
}, 90_000);

it("names NATS_URL in one line when no NATS server answers, rather than falling back to NOTIFY", async () => {
  const stderr = await startWith(db.current.url, { NATS_URL: `nats://127.0.0.1:${await freePort()}` });
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).toMatch(/^gateway failed to start: NATS_URL: cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+/);
}, 90_000);

it("names the privilege PostgreSQL 15 needs when the role may not create tables", async () => {
  // The test role needs CREATEROLE (.ci/run grants it to its role on Debian's server).
  await db.current.sql.unsafe(`create role ${role} login password 'limited-pass'`);
  await db.current.sql.unsafe(`revoke create on schema public from public; grant connect on database "${databaseName()}" to ${role}`);
  const url = new URL(db.current.url);
  url.username = role;
  url.password = "limited-pass";
  const stderr = await startWith(url.toString());
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).toContain("DATABASE_URL: this role may not create the gateway's tables");
  expect(stderr).toContain("GRANT CREATE ON SCHEMA public");
}, 90_000);
