import type { AddressInfo } from "node:net";
import { request as httpRequest } from "node:http";
import { serve } from "@hono/node-server";
import { LIMITS } from "@openwork/runner-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelRefusal } from "../channel-refusal.js";
import { readJsonBody } from "./read-json-body.js";

// Served over real HTTP by @hono/node-server, as hosts serve the routes: a body with a declared
// length takes its direct read, a chunked one the counted stream, and both keep the limit.
let url = "";
let server: ReturnType<typeof serve>;
beforeAll(async () => {
  server = serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request: Request) => {
      try {
        return Response.json({ read: await readJsonBody(request) });
      } catch (error) {
        if (error instanceof ChannelRefusal) return Response.json({ code: error.code }, { status: 400 });
        throw error;
      }
    },
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** POSTs `chunks` as they are given: with their total as Content-Length, or chunked. */
function post(chunks: string[], framing: "declared" | "chunked"): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const length = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0);
    const headers = framing === "declared" ? { "content-length": String(length) } : { "transfer-encoding": "chunked" };
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("readJsonBody", () => {
  it("checks a body read whole against the limit, whatever length a host's Request declares", async () => {
    const past = JSON.stringify({ padding: "x".repeat(LIMITS.bodyBytes) });
    for (const declared of ["10", "not a number"]) {
      const request = new Request("http://gateway.test/", { method: "POST", body: past, headers: { "content-length": declared } });
      await expect(readJsonBody(request)).rejects.toMatchObject({ code: "payload_too_large" });
    }
  });

  it.each(["declared", "chunked"] as const)("reads a %s JSON body, an empty one as {}, and refuses one that is not JSON", async (framing) => {
    expect(await post(['{"attempt":', '1,"text":"caf\\u00e9 \\u0000"}'], framing)).toEqual({
      status: 200,
      body: { read: { attempt: 1, text: "café \uFFFD" } },
    });
    expect(await post([], framing)).toEqual({ status: 200, body: { read: {} } });
    expect(await post(["{nope"], framing)).toEqual({ status: 400, body: { code: "invalid_request" } });
  });

  it.each(["declared", "chunked"] as const)("refuses a %s body past LIMITS.bodyBytes, and takes one at the limit", async (framing) => {
    const atLimit = JSON.stringify({ padding: "x".repeat(LIMITS.bodyBytes - 14) });
    expect(Buffer.byteLength(atLimit)).toBe(LIMITS.bodyBytes);
    expect((await post([atLimit.slice(0, 1000), atLimit.slice(1000)], framing)).status).toBe(200);
    const past = JSON.stringify({ padding: "x".repeat(LIMITS.bodyBytes) });
    expect(await post([past.slice(0, 1000), past.slice(1000)], framing)).toEqual({ status: 400, body: { code: "payload_too_large" } });
  });
});
