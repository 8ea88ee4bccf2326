export { type EmbeddedServer, startEmbeddedPostgres } from "./embedded-postgres.js";
