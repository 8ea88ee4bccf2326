import { library } from "../../tsup.presets";

// `testing` is the runner-channel conformance suite for gateway implementers (imports vitest).
export default library({ index: "src/index.ts", "testing/index": "src/testing/index.ts" });
