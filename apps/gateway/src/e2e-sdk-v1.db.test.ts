import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mcpEndpointV1 } from "./testing/mcp-endpoint-v1.js";
import { describeGatewayE2e } from "./testing/gateway-e2e-suite.js";

// A gateway on sdk 1.x with ext-apps 1.7 (the v1 adapter) through the v1 Client.
describeGatewayE2e({
  generation: "@modelcontextprotocol/sdk 1.x",
  mcpEndpoint: mcpEndpointV1(),
  connect: async (url, token) => {
    const client = new Client({ name: "e2e-v1", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return client;
  },
});
