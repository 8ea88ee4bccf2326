import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

// Shared code is handed its dialects (a `DialectSet`) instead of importing a registry that imports
// the dialects, which import shared code: no module of this package may reach itself again
// through the imports that run (`import type` is erased and never loads a module).
const SRC = fileURLToPath(new URL(".", import.meta.url));
const IMPORT = /^(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+"(\.[^"]+)"/gm;

function modules(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(SRC, file), "utf8");
    const targets = [...text.matchAll(IMPORT)].map((match) => relative(SRC, resolve(dirname(join(SRC, file)), match[1]!.replace(/\.js$/, ".ts"))));
    graph.set(file, targets);
  }
  return graph;
}

/** The modules that reach themselves again, by depth-first search (grey: on the current path). */
function cyclic(graph: Map<string, string[]>): string[] {
  const state = new Map<string, "grey" | "black">();
  const found = new Set<string>();
  const visit = (file: string, path: string[]) => {
    state.set(file, "grey");
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "grey") for (const member of path.slice(path.indexOf(next))) found.add(member);
      else if (!state.has(next)) visit(next, [...path, next]);
    }
    state.set(file, "black");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);
  return [...found].sort();
}

it("has no import cycle among the modules that load", () => {
  const graph = modules();
  expect(graph.size).toBeGreaterThan(80);
  expect(cyclic(graph)).toEqual([]);
});
