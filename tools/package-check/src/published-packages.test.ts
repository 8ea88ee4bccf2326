import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Each package a host installs, checked as npm would hand it out: publint on the packed files
// (entries exist, exports and types agree), and @arethetypeswrong/cli on the tarball (every entry
// resolves to its types under Node's ESM and bundler resolution; the packages are ESM only, so
// CommonJS and node10 resolution are out of scope).
const run = promisify(execFile);
const PACKAGES = fileURLToPath(new URL("../../../packages/", import.meta.url));
const BIN = fileURLToPath(new URL("../node_modules/.bin/", import.meta.url));
const published = readdirSync(PACKAGES).filter((name) => {
  const manifest = JSON.parse(readFileSync(`${PACKAGES}${name}/package.json`, "utf8")) as { private?: boolean };
  return manifest.private !== true;
});

describe.each(published)("%s", (name) => {
  const cwd = `${PACKAGES}${name}`;

  it("passes publint, strict", async () => {
    const { stdout } = await run(`${BIN}publint`, ["--strict"], { cwd });
    expect(stdout).toContain("All good!");
  });

  it("resolves every entry to its types (arethetypeswrong, ESM only)", async () => {
    // attw exits non-zero on any problem outside the ignored resolutions: the rejection fails the test with its table.
    const { stdout } = await run(`${BIN}attw`, ["--pack", ".", "--profile", "esm-only", "--format", "ascii"], { cwd });
    expect(stdout).toContain(`@openwork/${name}`);
  });
});

it("checks every package of packages/", () => {
  expect(published.length).toBeGreaterThanOrEqual(7);
});
