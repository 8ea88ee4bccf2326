import { library } from "../../tsup.presets";

// `.` is the wire contract, `client` the runner side (no server code), `server` token minting and
// verification; `internal` the gateway-side wire schemas for this repository's sibling packages
// (no stability promise; never imported by `client`); `testing` is the runner-channel conformance
// suite for gateway implementers (imports vitest).
export default library({
  index: "src/index.ts",
  client: "src/client.ts",
  server: "src/server.ts",
  internal: "src/internal.ts",
  "testing/index": "src/testing/index.ts",
});
