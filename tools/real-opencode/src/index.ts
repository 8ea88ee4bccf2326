export { type RealOpencode, startRealOpencode } from "./start-real-opencode.js";
export { type FakeLlmRequest, startFakeLlm } from "./fake-llm.js";
