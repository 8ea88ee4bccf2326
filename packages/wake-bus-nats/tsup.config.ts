import { library } from "../../tsup.presets";

// `testing` starts Debian's nats-server for a host's own tests.
export default library({ index: "src/index.ts", "testing/index": "src/testing/index.ts" });
