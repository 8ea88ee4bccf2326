import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

// Statements after which the schema may no longer serve the release before (a replica still
// running it during a rolling deploy): something it names is gone, renamed, re-keyed or narrowed.
const STRUCTURAL =
  /\b(drop\s+(constraint|column|table|index|not\s+null|default)|rename\b|alter\s+column\s+\w+\s+(type|set\s+not\s+null)|add\s+primary\s+key|delete\s+from|update\s+\w+\s+set)/i;
const VERDICT = /^-- (breaking|compatible): \S/m;

/** Every migration file of every package and app: `<folder>/sql/NNNN_*.sql`. */
function migrationFiles(): { path: string; sql: string }[] {
  return ["packages", "apps"].flatMap((area) =>
    readdirSync(`${root}${area}`).flatMap((name) => {
      const folder = `${root}${area}/${name}/sql`;
      let files: string[];
      try {
        files = readdirSync(folder).filter((file) => /^\d{4}_.+\.sql$/.test(file));
      } catch {
        return [];
      }
      return files.map((file) => ({ path: `${area}/${name}/sql/${file}`, sql: readFileSync(`${folder}/${file}`, "utf8") }));
    }),
  );
}

describe("migration markers", () => {
  const files = migrationFiles();

  it("finds the migrations", () => {
    expect(files.length).toBeGreaterThan(15);
  });

  it("every migration that drops, renames, re-keys or rewrites says whether the release before still runs on its schema", () => {
    const unmarked = files.filter((file) => STRUCTURAL.test(file.sql) && !VERDICT.test(file.sql)).map((file) => file.path);
    expect(unmarked, "add a first line `-- breaking: <what the release before cannot do>` or `-- compatible: <why it still works>`").toEqual([]);
  });

  it("a breaking migration travels in the embedded module, so a host can see it before applying", async () => {
    const { renderMigrations } = (await import(new URL("../../../scripts/embed-sql.mjs", import.meta.url).href)) as {
      renderMigrations(folder: string): string;
    };
    const rendered = renderMigrations(`${root}packages/desktop-target/sql`);
    expect(rendered).toMatch(/name: "0010_organization_keys\.sql", sql: .*, breaking: "primary and foreign keys lead with organization_id/);
    expect(rendered).not.toMatch(/name: "0014_folded_turns\.sql", sql: .*, breaking:/);
  });
});
