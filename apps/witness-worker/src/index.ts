export { type WitnessWorkerOptions, createWitnessWorker } from "./create-witness-worker.js";
export { createEchoEngine } from "./echo-engine.js";
export { type RunningWitness, startWitnessWorker } from "./start-witness-worker.js";
