import { defineConfig } from "tsup";

export default defineConfig({
  // `testing` is the runner-channel conformance suite for gateway implementers (imports vitest).
  entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
});
