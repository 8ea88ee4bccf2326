export { type EmbeddedServer, freePort, startEmbeddedPostgres } from "./embedded-postgres.js";
export { packagedBinaries, reachableBinaries, reachableBy, runAs } from "./postgres-binaries.js";
