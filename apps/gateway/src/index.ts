export { type GatewayOptions, createGateway } from "./create-gateway.js";
export { serveGateway } from "./serve-gateway.js";
export { type DevConfig, type DevMember, fixedDevMember, loadDevConfig, memberCall, memberContext, userIdOf } from "./dev-members.js";
export type { McpAuth, McpEndpoint, McpEndpointFactory } from "./mcp-endpoint.js";
// Two shards on one machine: the stand-in for a distributed database's router (not a product).
export { organizationOfRequest, shardOf, startShardRouter } from "./shards/shard-router.js";
export { startShards } from "./shards/start-shards.js";
