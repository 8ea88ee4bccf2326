#!/usr/bin/env node
// Embeds a package's migrations (sql/NNNN_*.sql) in a TypeScript module, so a host that bundles
// its server (esbuild, tsup) carries them inside the bundle instead of reading files next to a
// module that moved. Run by each owning package's build; a test checks the module is current.
// Usage: node embed-sql.mjs <sql folder> <output .ts> [module of the Migration type]
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function renderMigrations(folder, typeModule = "@openwork/remote-session-core") {
  const names = readdirSync(folder)
    .filter((name) => /^\d{4}_.+\.sql$/.test(name))
    .sort();
  const entries = names.map((name) => {
    const sql = readFileSync(join(folder, name), "utf8");
    const breaking = breakingOf(sql);
    return `  { name: ${JSON.stringify(name)}, sql: ${JSON.stringify(sql)}${breaking ? `, breaking: ${JSON.stringify(breaking)}` : ""} },`;
  });
  return [
    "// Generated from sql/*.sql by scripts/embed-sql.mjs during the build. Do not edit: edit the .sql files.",
    `import type { Migration } from ${JSON.stringify(typeModule)};`,
    "",
    "export const MIGRATIONS: readonly Migration[] = [",
    ...entries,
    "];",
    "",
  ].join("\n");
}

/** The reason on a migration's `-- breaking:` line (the previous release cannot run on the schema after it). */
export const breakingOf = (sql) => /^-- breaking: (.+)$/m.exec(sql)?.[1]?.trim();

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [folder, output, typeModule] = process.argv.slice(2);
  if (!folder || !output) {
    console.error("usage: embed-sql.mjs <sql folder> <output .ts>");
    process.exit(2);
  }
  writeFileSync(output, renderMigrations(folder, typeModule));
}
