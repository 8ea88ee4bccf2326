// Test support for implementers of the runner channel (a gateway's runner routes).
export type { RunnerChannelHarness } from "./runner-channel-harness.js";
export { describeRunnerChannel, eventually } from "./runner-channel-conformance.js";
