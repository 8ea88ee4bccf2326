// What a host serving on Node's own HTTP server adds: connection limits that make a flood cost
// the one flooding.
export { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, limitConnections, serverOptionsOf } from "./node/connection-limits.js";
