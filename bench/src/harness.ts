import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { startEmbeddedPostgres } from "@openwork/embedded-postgres";
import postgres from "postgres";

/**
 * A fresh database for one benchmark: `DATABASE_URL`'s server, or an embedded PostgreSQL 18
 * started with `settings`; `locale`, the new database's collation (default the cluster's).
 */
export async function benchDatabase(
  name: string,
  options: { settings?: Record<string, string>; locale?: string } = {},
): Promise<{ url: string; adminUrl: string; database: string; server: string; stop(): Promise<void> }> {
  const external = process.env.DATABASE_URL;
  const embedded = external ? null : await startEmbeddedPostgres({ settings: options.settings });
  const admin = external ?? embedded!.url;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  const database = `bench_${name.replace(/\W/g, "_")}_${Date.now()}`;
  const locale = options.locale ? ` template template0 locale '${options.locale.replace(/[^\w.-]/g, "")}'` : "";
  await sql.unsafe(`create database ${database}${locale}`);
  const [{ version }] = (await sql`select version()`) as unknown as [{ version: string }];
  await sql.end();
  const url = new URL(admin);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    adminUrl: admin,
    database,
    server: version.split(" on ")[0]!,
    stop: async () => {
      const cleanup = postgres(admin, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${database} with (force)`).catch(() => {});
      await cleanup.end();
      await embedded?.stop();
    },
  };
}

/** p50 / p99 / mean / max of samples in ms. */
export function summarize(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    n: samples.length,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    mean: round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)),
    max: round(sorted.at(-1) ?? Number.NaN),
  };
}

/** Prints a table and writes `bench/results/<name>.json` with the machine's facts. */
export async function report(name: string, database: string, rows: Record<string, Record<string, unknown>>, notes: string[] = []) {
  const result = {
    benchmark: name,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    database,
    rows,
    notes,
  };
  process.stdout.write(`\n${name} — ${database}, ${result.machine.cpus} cores, Node ${process.version}\n`);
  console.table(rows);
  for (const note of notes) process.stdout.write(`  ${note}\n`);
  await mkdir(new URL("../results/", import.meta.url), { recursive: true });
  await writeFile(new URL(`../results/${name}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
