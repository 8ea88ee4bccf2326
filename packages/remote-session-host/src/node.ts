// What a host serving on Node's own HTTP server adds: connection limits sized by what the process
// may hold, that make a flood cost the one flooding and keep wake streams apart from requests.
export {
  type ConnectionLimits,
  isRunnerWakeStream,
  limitConnections,
  listenWithLimits,
  type ProcessResources,
  readProcessResources,
  serverOptionsOf,
  sizeConnectionLimits,
} from "./node/connection-limits.js";
