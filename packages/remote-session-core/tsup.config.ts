import { library } from "../../tsup.presets";

// `testing` is the Target conformance kit for target authors (imports vitest).
export default library({ index: "src/index.ts", "testing/index": "src/testing/index.ts" });
