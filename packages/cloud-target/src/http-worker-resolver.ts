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

/** A resolver answer that is not about the member: the gateway's configuration is wrong. */
export class ResolverConfigurationError extends Error {
  override readonly name = "ResolverConfigurationError";
  constructor(readonly status: number) {
    super(`the worker resolver answered ${status}`);
  }
}

/**
 * A WorkerResolver over den-api's `GET /v1/cloud/gateway/resolve`, under the base URL's path (a
 * den-api behind `/api/den` keeps its prefix). A 404 whose JSON body names the member's missing
 * cloud reads as `missing`; a `ready` answer without a URL or client token as `failed`; any other
 * refusal (401/403, a 404 of a route that is not there) throws ResolverConfigurationError.
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
      const url = new URL("v1/cloud/gateway/resolve", options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
      if (!options.memberHeaders) {
        url.searchParams.set("organizationId", scope.organizationId);
        url.searchParams.set("memberId", scope.memberId);
      }
      const response = await api(url, {
        headers: { "x-openwork-gateway-key": options.gatewayKey, ...options.memberHeaders?.(scope) },
        ...(signal ? { signal } : {}),
      });
      if (response.status === 404 && (await namesMissingCloud(response))) return { status: "missing" };
      if (!response.ok) throw new ResolverConfigurationError(response.status);
      const body = ResolveResponseSchema.parse(await response.json());
      return toResolution(body);
    },
  };
}

/** den-api's "no cloud for this member" is JSON naming it; a missing route is not. */
async function namesMissingCloud(response: Response): Promise<boolean> {
  const body = (await response.json().catch(() => null)) as { code?: unknown; error?: unknown; status?: unknown } | null;
  return body !== null && typeof body === "object" && [body.code, body.error, body.status].some((v) => typeof v === "string" && /not_found|missing/.test(v));
}

function toResolution(body: z.infer<typeof ResolveResponseSchema>): WorkerResolution {
  const reason = body.reason ?? body.failure?.code ?? undefined;
  const workerId = body.workerId ?? undefined;
  const known = { ...(workerId ? { workerId } : {}), ...(reason ? { reason } : {}) };
  switch (body.status) {
    case "ready":
      return body.url && body.clientToken
        ? { status: "ready", workerId: workerId ?? "worker", url: body.url, clientToken: body.clientToken }
        : { status: "failed", ...known, reason: "missing_tokens" };
    case "missing":
      return { status: "missing" };
    default:
      return { status: body.status, ...known };
  }
}
