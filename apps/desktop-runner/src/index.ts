export { type DesktopRunnerOptions, DesktopRevokedError, type RunnerEnd, startDesktopRunner } from "./start-desktop-runner.js";
export type { LocalEngine } from "./local-engine.js";
export { createEchoEngine, echoTokens } from "./echo-engine.js";
export { createRunnerHandlers } from "./runner-handlers.js";
export { createOpencodeEngine } from "./opencode-engine.js";
export { type RunnerWorkspace, inventoryOf, startInventoryReports } from "./inventory-reports.js";
export { addWorktree, worktreeName, WorktreeError } from "./git-worktree.js";
