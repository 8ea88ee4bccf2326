export { type GatewayOptions, createGateway } from "./create-gateway.js";
export { serveGateway } from "./serve-gateway.js";
export { type DevConfig, type DevMember, fixedDevMember, loadDevConfig } from "./dev-members.js";
