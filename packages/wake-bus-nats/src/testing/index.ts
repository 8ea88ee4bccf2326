// Debian's nats-server, started for a host's own tests.
export { type NatsServer, findNatsServer, startNatsServer } from "./nats-server.js";
