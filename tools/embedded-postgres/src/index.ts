export { type EmbeddedServer, freePort, startEmbeddedPostgres } from "./embedded-postgres.js";
export { copyWithin, packagedBinaries, type PostgresBinaries, reachableBinaries, reachableBy, type RunAs, runAs } from "./postgres-binaries.js";
