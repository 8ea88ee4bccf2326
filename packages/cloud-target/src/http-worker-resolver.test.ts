import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { createHttpWorkerResolver, ResolverConfigurationError } from "./http-worker-resolver.js";

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

async function serve(status: number, body: unknown) {
  const seen: { url: string; key: string | undefined }[] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? "", key: request.headers["x-openwork-gateway-key"] as string | undefined });
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const scope = { organizationId: "org_1", memberId: "mem_1" };

it("asks den-api's resolve route with the gateway key and reads a ready worker", async () => {
  const { url, seen } = await serve(200, { status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c", hostToken: "h", expiresAt: null });
  const resolution = await createHttpWorkerResolver({ baseUrl: url, gatewayKey: "k" }).resolve(scope);
  expect(resolution).toEqual({ status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  expect(seen[0]).toEqual({ url: "/v1/cloud/gateway/resolve?organizationId=org_1&memberId=mem_1", key: "k" });
});

it("keeps the base URL's path, and takes a ready worker without a host token", async () => {
  const { url, seen } = await serve(200, { status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  const resolution = await createHttpWorkerResolver({ baseUrl: `${url}/api/den`, gatewayKey: "k" }).resolve(scope);
  expect(resolution).toEqual({ status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  expect(seen[0]!.url).toBe("/api/den/v1/cloud/gateway/resolve?organizationId=org_1&memberId=mem_1");
});

it("treats a refusal of the gateway itself as a configuration error, not as a member without cloud", async () => {
  for (const [status, body] of [
    [401, { error: "unauthorized" }],
    [403, { error: "forbidden" }],
    [404, "Not Found"],
  ] as const) {
    const resolver = createHttpWorkerResolver({ baseUrl: (await serve(status, body)).url, gatewayKey: "wrong" });
    await expect(resolver.resolve(scope)).rejects.toBeInstanceOf(ResolverConfigurationError);
  }
});

it("reads 404 as missing, a ready answer without tokens as failed, and waking as waking", async () => {
  expect(await createHttpWorkerResolver({ baseUrl: (await serve(404, { code: "cloud_not_found" })).url, gatewayKey: "k" }).resolve(scope)).toEqual({ status: "missing" });
  const tokenless = await serve(200, { status: "ready", url: "https://w", clientToken: null, hostToken: null });
  expect(await createHttpWorkerResolver({ baseUrl: tokenless.url, gatewayKey: "k" }).resolve(scope)).toMatchObject({ status: "failed", reason: "missing_tokens" });
  const waking = await serve(200, { status: "waking", workerId: "w1", reason: "stopped", url: null, clientToken: null, hostToken: null });
  expect(await createHttpWorkerResolver({ baseUrl: waking.url, gatewayKey: "k" }).resolve(scope)).toEqual({ status: "waking", workerId: "w1", reason: "stopped" });
});
