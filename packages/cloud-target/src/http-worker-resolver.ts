import type { MemberScope } from "@openwork/remote-session-core";
import ky from "ky";
import { z } from "zod";
import type { WorkerResolution, WorkerResolver } from "./worker-resolver.js";

const ResolveResponseSchema = z.looseObject({
  status: z.enum(["ready", "waking", "provisioning", "failed", "missing"]),
  workerId: z.string().max(200).nullish(),
  url: z.string().max(2_048).nullish(),
  clientToken: z.string().max(4_096).nullish(),
  hostToken: z.string().max(4_096).nullish(),
  reason: z.string().max(200).nullish(),
  failure: z.looseObject({ code: z.string().max(200) }).nullish(),
});

export interface HttpWorkerResolverOptions {
  /** den-api's base URL. */
  baseUrl: string;
  /** The shared key den-api expects in `X-OpenWork-Gateway-Key`. */
  gatewayKey: string;
  /** Extra headers that tell den-api which member is asking (its member auth). Default: query parameters. */
  memberHeaders?: (scope: MemberScope) => Record<string, string>;
  fetch?: typeof fetch;
  /** Per request. Default 5 s. */
  timeoutMs?: number;
}

/**
 * A WorkerResolver over den-api's `GET /v1/cloud/gateway/resolve`. A 404 (no cloud for this
 * member) reads as `missing`; a `ready` answer without a URL or tokens as `failed`.
 */
export function createHttpWorkerResolver(options: HttpWorkerResolverOptions): WorkerResolver {
  const api = ky.create({
    timeout: options.timeoutMs ?? 5_000,
    retry: 0,
    throwHttpErrors: false,
    redirect: "error",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    resolve: async (scope, signal) => {
      const url = new URL("/v1/cloud/gateway/resolve", options.baseUrl);
      if (!options.memberHeaders) {
        url.searchParams.set("organizationId", scope.organizationId);
        url.searchParams.set("memberId", scope.memberId);
      }
      const response = await api(url, {
        headers: { "x-openwork-gateway-key": options.gatewayKey, ...options.memberHeaders?.(scope) },
        ...(signal ? { signal } : {}),
      });
      if (response.status === 404) return { status: "missing" };
      if (!response.ok) throw new Error(`worker resolver answered ${response.status}`);
      const body = ResolveResponseSchema.parse(await response.json());
      return toResolution(body);
    },
  };
}

function toResolution(body: z.infer<typeof ResolveResponseSchema>): WorkerResolution {
  const reason = body.reason ?? body.failure?.code ?? undefined;
  const workerId = body.workerId ?? undefined;
  const known = { ...(workerId ? { workerId } : {}), ...(reason ? { reason } : {}) };
  switch (body.status) {
    case "ready":
      return body.url && body.clientToken && body.hostToken
        ? { status: "ready", workerId: workerId ?? "worker", url: body.url, clientToken: body.clientToken, hostToken: body.hostToken }
        : { status: "failed", ...known, reason: "missing_tokens" };
    case "missing":
      return { status: "missing" };
    default:
      return { status: body.status, ...known };
  }
}
