import { library } from "../../tsup.presets";

// `testing` holds doubles of OpenWork's desktop runners, for hosts' own tests; `internal` is for
// this repository's sibling packages.
export default library({ index: "src/index.ts", internal: "src/internal.ts", "testing/index": "src/testing/index.ts" });
