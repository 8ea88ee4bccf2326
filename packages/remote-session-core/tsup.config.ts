import { library } from "../../tsup.presets";

// `target` holds the helpers for writing a Target; `testing` is the Target conformance kit for target authors (imports vitest); `wire` the shapes
// the runner channel shares (zod and eventsource-parser only: a desktop runner loads it without postgres or node:crypto); `internal` what
// only this repository's sibling packages share (no stability promise).
export default library({
  index: "src/index.ts",
  "wire/index": "src/wire/index.ts",
  "target/index": "src/target/index.ts",
  "testing/index": "src/testing/index.ts",
  internal: "src/internal.ts",
});
