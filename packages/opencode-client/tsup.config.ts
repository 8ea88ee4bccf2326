import { library } from "../../tsup.presets";

// `.` is what a reader of an opencode engine names; `internal` the rest of opencode's shapes, for
// this repository's sibling packages (no stability promise).
export default library({ index: "src/index.ts", internal: "src/internal.ts" });
