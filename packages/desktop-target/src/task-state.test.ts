import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { fromStates, OPEN_TASK_STATES, TASK_MOVES, TASK_STATES, TASK_TRANSITIONS, type TaskMove } from "./task-state.js";

const SRC = fileURLToPath(new URL(".", import.meta.url));
const SCHEMA = fileURLToPath(new URL("../schema.md", import.meta.url));

interface Template {
  file: string;
  /** The template's text between its holes. */
  text: string;
}

/** The package's own code: tests, test helpers, generated files and the table itself left out. */
async function sources(): Promise<{ file: string; text: string }[]> {
  const files = (await readdir(SRC, { recursive: true, withFileTypes: true }))
    .map((entry) => ({ entry, file: relative(SRC, join(entry.parentPath, entry.name)) }))
    .filter(({ entry, file }) => entry.isFile() && file.endsWith(".ts") && !/\.test\.ts$|^testing\/|generated|^task-state\.ts$/.test(file));
  return Promise.all(files.map(async ({ file }) => ({ file, text: await readFile(join(SRC, file), "utf8") })));
}

/** Every template literal of the package's own code. */
async function templates(): Promise<Template[]> {
  const found: Template[] = [];
  for (const { file, text } of await sources()) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNoSubstitutionTemplateLiteral(node)) found.push({ file, text: node.text });
      if (ts.isTemplateExpression(node)) {
        found.push({ file, text: [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(" $" + "{} ") });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

// A task state quoted in SQL; a JSON key (`folded->'done'`) is no state.
const QUOTED_STATE = new RegExp(`(?<!->>?\\s*)'(${TASK_STATES.join("|")})'`, "g");

/** The states a line of the schema dump names as string literals. */
const statesIn = (line: string) => [...line.matchAll(/'(\w+)'::text/g)].map((m) => m[1]).filter((s) => (TASK_STATES as readonly string[]).includes(s!));

describe("task states come from the table", () => {
  it("no SQL of the package names a task state itself: every guard and every state set comes from TASK_MOVES", async () => {
    const literals = (await templates()).flatMap(({ file, text }) => [...text.matchAll(QUOTED_STATE)].map((m) => `${file}: ${m[0]}`));
    expect(literals).toEqual([]);
  });

  it("every entry of the table is what some statement or check of the package uses", async () => {
    const used = (await sources()).flatMap(({ text }) =>
      [...text.matchAll(/\b(?:leaving|movedTo|fromStates|assertAttemptHeld)\([^)]*?"(\w+)"/g)].map((m) => m[1]!),
    );
    expect(new Set(used)).toEqual(new Set(Object.keys(TASK_MOVES)));
  });

  it("derives the transition table from the moves", () => {
    expect(TASK_TRANSITIONS).toEqual({
      queued: ["claimed", "failed", "cancelled", "expired"],
      claimed: ["claimed", "done", "failed", "cancelled", "interrupted"],
      done: [],
      failed: [],
      cancelled: [],
      // An OpenWork desktop's receipt that comes after its lease lapsed still settles the task.
      interrupted: ["done", "failed"],
      expired: [],
    });
    expect(OPEN_TASK_STATES).toEqual(["queued", "claimed"]);
    for (const move of Object.keys(TASK_MOVES) as TaskMove[]) expect(fromStates(move).every((s) => TASK_STATES.includes(s))).toBe(true);
  });

  it("agrees with the schema: its check constraint allows exactly TASK_STATES, and the partial indexes on state are the table's from-states", async () => {
    const current = (await readFile(SCHEMA, "utf8")).split("\n## What each migration changes")[0]!.split("\n");
    const line = (name: string) => current.find((l) => l.includes(`desktop_task.${name} `)) ?? "";
    expect(statesIn(line("desktop_task_state_check"))).toEqual([...TASK_STATES]);
    // The claim and the work listing, the deadline sweep, the lease sweep, a session's open turns, the presence sweep.
    expect(statesIn(line("desktop_task_queued"))).toEqual(fromStates("claim"));
    expect(statesIn(line("desktop_task_deadline"))).toEqual(fromStates("expire"));
    expect(statesIn(line("desktop_task_claimed"))).toEqual(fromStates("interrupt"));
    expect(statesIn(line("desktop_task_open_turns"))).toEqual(OPEN_TASK_STATES);
    expect(statesIn(line("desktop_task_openwork_live"))).toEqual(fromStates("report"));
  });
});
