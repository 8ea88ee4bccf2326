#!/usr/bin/env node
// Embeds one text file of a package (a skill document) in a TypeScript module as a string
// constant, so a bundled host carries it inside the bundle. Run by the owning package's build; a
// test checks the module is current.
// Usage: node embed-text.mjs <text file> <output .ts> <export name>
import { readFileSync, writeFileSync } from "node:fs";

export function renderText(file, exportName, shownAs = file) {
  return [
    `// Generated from ${shownAs} by scripts/embed-text.mjs during the build. Do not edit: edit ${shownAs}.`,
    "",
    `export const ${exportName} = ${JSON.stringify(readFileSync(file, "utf8"))};`,
    "",
  ].join("\n");
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [file, output, exportName] = process.argv.slice(2);
  if (!file || !output || !exportName) {
    console.error("usage: embed-text.mjs <text file> <output .ts> <export name>");
    process.exit(2);
  }
  writeFileSync(output, renderText(file, exportName));
}
