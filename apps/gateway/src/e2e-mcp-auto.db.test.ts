import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { describeGatewayE2e } from "./testing/gateway-e2e-suite.js";

// The reference gateway through the v2 client negotiating the revision (`auto`): it probes with
// `server/discover`, finds 2026-07-28 served, and stays in that era for every capability.
describeGatewayE2e({
  generation: "@modelcontextprotocol/server 2.x, a client negotiating (auto)",
  connect: async (url, token) => {
    const client = new Client({ name: "e2e-auto", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    return client;
  },
});
