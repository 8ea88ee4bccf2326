import { library } from "../../tsup.presets";

export default library({ index: "src/index.ts", node: "src/node.ts", "server-v2": "src/server-v2.ts" });
