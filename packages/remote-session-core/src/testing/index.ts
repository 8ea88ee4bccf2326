// Test helpers for Target authors: import from "@openwork/remote-session-core/testing" (needs vitest).
export { type TargetSessions, targetSessions } from "./target-sessions.js";
export { type TargetUnderTest, runTargetConformance } from "./target-conformance.js";
