import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { describeGatewayE2e } from "./testing/gateway-e2e-suite.js";

// The reference gateway through the v2 client pinned to MCP 2026-07-28: `server/discover`, then
// self-contained requests (no initialize, no Mcp-Session-Id), every capability as a 2025 client gets it.
describeGatewayE2e({
  generation: "@modelcontextprotocol/server 2.x, a client pinned to MCP 2026-07-28",
  connect: async (url, token) => {
    const client = new Client({ name: "e2e-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    return client;
  },
});
