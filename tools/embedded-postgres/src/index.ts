export { type EmbeddedServer, freePort, startEmbeddedPostgres } from "./embedded-postgres.js";
