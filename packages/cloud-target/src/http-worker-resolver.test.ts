import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { createHttpWorkerResolver, ResolverConfigurationError } from "./http-worker-resolver.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

async function serve(status: number, body: unknown) {
  const seen: { url: string; key: string | undefined; org: string | undefined; authorization: string | undefined }[] = [];
  const server = createServer((request, response) => {
    const header = (name: string) => request.headers[name] as string | undefined;
    seen.push({ url: request.url ?? "", key: header("x-openwork-gateway-key"), org: header("x-openwork-org-id"), authorization: header("authorization") });
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const scope = { organizationId: "org_1", memberId: "mem_1" };

const memberHeaders = (s: { memberId: string }) => ({ authorization: `Bearer session-of-${s.memberId}` });

it("asks den-api's resolve route as den-api serves it: the gateway key, then the member's own credentials and organization", async () => {
  const { url, seen } = await serve(200, {
    status: "ready",
    workerId: "w1",
    url: "https://w1.example.test",
    clientToken: "c",
    hostToken: "h",
    expiresAt: null,
  });
  const resolution = await createHttpWorkerResolver({ baseUrl: url, gatewayKey: "k", memberHeaders }).resolve(scope);
  expect(resolution).toEqual({ status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  expect(seen[0]).toEqual({ url: "/v1/cloud/gateway/resolve", key: "k", org: "org_1", authorization: "Bearer session-of-mem_1" });
});

it("ignores members den-api adds to its answer, at every depth", async () => {
  const body = {
    status: "waking",
    url: null,
    clientToken: null,
    hostToken: null,
    expiresAt: null,
    failure: { code: "stopped", stage: "runtime", extra: { nested: true } },
    providerSync: { status: "degraded", reason: "unsupported" },
    added: 1,
  };
  const resolution = await createHttpWorkerResolver({ baseUrl: (await serve(200, body)).url, gatewayKey: "k", memberHeaders }).resolve(scope);
  expect(resolution).toEqual({ status: "waking", reason: "stopped" });
});

it("keeps the base URL's path, and takes a ready worker without a host token", async () => {
  const { url, seen } = await serve(200, { status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  const resolution = await createHttpWorkerResolver({ baseUrl: `${url}/api/den`, gatewayKey: "k" }).resolve(scope);
  expect(resolution).toEqual({ status: "ready", workerId: "w1", url: "https://w1.example.test", clientToken: "c" });
  expect(seen[0]!.url).toBe("/api/den/v1/cloud/gateway/resolve");
});

it("never reads den-api's 404 cloud_not_found (a wrong gateway key answers it too) as a member without cloud", async () => {
  const resolver = createHttpWorkerResolver({ baseUrl: (await serve(404, { error: "cloud_not_found" })).url, gatewayKey: "wrong", memberHeaders });
  const error = await resolver.resolve(scope).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ResolverConfigurationError);
  expect(error).toMatchObject({ status: 404, code: "cloud_not_found", fix: expect.stringContaining("gateway key") });
});

it("names what the operator must fix for each refusal of the gateway itself", async () => {
  const fixOf = async (status: number, body: unknown, withMember = true) =>
    createHttpWorkerResolver({ baseUrl: (await serve(status, body)).url, gatewayKey: "k", ...(withMember ? { memberHeaders } : {}) })
      .resolve(scope)
      .catch((e: unknown) => (e instanceof ResolverConfigurationError ? e.fix : e));
  expect(await fixOf(401, { error: "unauthorized" }, false)).toContain("give createHttpWorkerResolver memberHeaders");
  expect(await fixOf(401, { error: "unauthorized" })).toContain("did not accept the member's credentials");
  expect(await fixOf(403, { error: "forbidden" })).toContain("403 forbidden");
  expect(await fixOf(404, "Not Found")).toContain("check the resolver's base URL");
  // A member without OpenWork Web access is the member's own matter, not the operator's.
  expect(await fixOf(403, { error: "openwork_web_access_required" })).toEqual({ status: "failed", reason: "openwork_web_access_required" });
});

it("reads a ready answer without tokens as failed, waking as waking, and missing (an internal resolver's) as missing", async () => {
  const tokenless = await serve(200, { status: "ready", url: "https://w", clientToken: null, hostToken: null });
  expect(await createHttpWorkerResolver({ baseUrl: tokenless.url, gatewayKey: "k" }).resolve(scope)).toMatchObject({
    status: "failed",
    reason: "missing_tokens",
  });
  const waking = await serve(200, { status: "waking", workerId: "w1", reason: "stopped", url: null, clientToken: null, hostToken: null });
  expect(await createHttpWorkerResolver({ baseUrl: waking.url, gatewayKey: "k" }).resolve(scope)).toEqual({
    status: "waking",
    workerId: "w1",
    reason: "stopped",
  });
  expect(await createHttpWorkerResolver({ baseUrl: (await serve(200, { status: "missing" })).url, gatewayKey: "k" }).resolve(scope)).toEqual({
    status: "missing",
  });
});
