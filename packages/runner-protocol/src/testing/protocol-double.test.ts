import { describeRunnerChannel } from "./runner-channel-conformance.js";
import { startProtocolDouble } from "./protocol-double.js";

describeRunnerChannel("in-memory protocol double", () => startProtocolDouble({ heartbeatIntervalMs: 100 }));
