import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describeGatewayE2e } from "./testing/gateway-e2e-suite.js";

// The reference gateway (server 2.x, the v2 adapter) through the v2 client package.
describeGatewayE2e({
  generation: "@modelcontextprotocol/server 2.x",
  connect: async (url, token) => {
    const client = new Client({ name: "e2e-v2", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return client;
  },
});
