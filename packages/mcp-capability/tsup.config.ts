import { library } from "../../tsup.presets";

export default library(["src/index.ts", "src/internal.ts", "src/sdk-v1.ts", "src/server-v2.ts"]);
