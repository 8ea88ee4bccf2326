export { type WitnessWorkerOptions, type WorkerPower, createWitnessWorker } from "./create-witness-worker.js";
export { type EchoEngine, createEchoEngine } from "./echo/echo-engine.js";
export type { McpCall } from "./echo/echo-mcp.js";
export type { EchoTiming } from "./echo/echo-sessions.js";
export { type RunningWitness, type StartWitnessOptions, startWitnessWorker } from "./start-witness-worker.js";
