import { library } from "../../tsup.presets";

// `testing` holds doubles of OpenWork's desktop runners, for hosts' own tests.
export default library({ index: "src/index.ts", "testing/index": "src/testing/index.ts" });
