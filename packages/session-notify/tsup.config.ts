import { library } from "../../tsup.presets";

// `internal` is for this repository's sibling packages.
export default library(["src/index.ts", "src/internal.ts"]);
