import { library } from "../../tsup.presets";

export default library({ index: "src/index.ts", node: "src/node.ts" });
