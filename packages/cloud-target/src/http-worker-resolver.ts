import type { MemberScope } from "@openwork/remote-session-core";
import ky, { HTTPError } from "ky";
import { z } from "zod";
import { TRANSIENT_READ_RETRY } from "./transient-retry.js";
import type { WorkerResolution, WorkerResolver } from "./worker-resolver.js";

// den-api's answer, loose at every depth: a newer den-api may add members anywhere.
export const ResolveResponseSchema = z.looseObject({
  status: z.enum(["ready", "waking", "provisioning", "failed", "missing"]),
  workerId: z.string().max(200).nullish(),
  url: z.string().max(2_048).nullish(),
  clientToken: z.string().max(4_096).nullish(),
  hostToken: z.string().max(4_096).nullish(),
  reason: z.string().max(200).nullish(),
  failure: z.looseObject({ code: z.string().max(200) }).nullish(),
});
const RefusalSchema = z.looseObject({ error: z.string().max(200).optional(), code: z.string().max(200).optional() });

export interface HttpWorkerResolverOptions {
  /** den-api's base URL (with `/api/den` when it is reached through the web proxy). */
  baseUrl: string;
  /** The shared key den-api expects in `X-OpenWork-Gateway-Key`. */
  gatewayKey: string;
  /**
   * The member's own credentials for den-api, which authenticates the member from the request
   * (after the key), not from parameters: e.g. `{ authorization: "Bearer <the member's den-api
   * session or API key>" }`. The organization is sent as `x-openwork-org-id`. Without them
   * den-api refuses every resolve (401), reported as a configuration error.
   */
  memberHeaders?: (scope: MemberScope) => Record<string, string> | Promise<Record<string, string>>;
  fetch?: typeof fetch;
  /** Per request. Default 5 s. */
  timeoutMs?: number;
}

/**
 * A resolver answer that is not about the member: the gateway's configuration (or den-api's) is
 * wrong. `fix` says what the operator should check; members are told cloud is unavailable.
 */
export class ResolverConfigurationError extends Error {
  override readonly name = "ResolverConfigurationError";
  constructor(
    readonly status: number,
    /** What den-api said (its error code), or `not_json` for an answer that is not den-api's. */
    readonly code: string,
    readonly fix: string,
  ) {
    super(`the worker resolver answered ${status} ${code}: ${fix}`);
  }
}

const ROUTE = "v1/cloud/gateway/resolve";

/**
 * A WorkerResolver over den-api's `GET /v1/cloud/gateway/resolve`, under the base URL's path (a
 * den-api behind `/api/den` keeps its prefix), spoken as den-api serves it: the gateway key in
 * `X-OpenWork-Gateway-Key`, then the member's own credentials (`memberHeaders`) and organization
 * (`x-openwork-org-id`). den-api answers a wrong key with the same 404 `cloud_not_found` as a
 * deployment without cloud, so a 404 is never read as "this member has no cloud": it throws
 * ResolverConfigurationError naming what to check, as do a refused member credential (401) and
 * any other refusal. A `ready` answer without a URL or client token reads as `failed`.
 */
export function createHttpWorkerResolver(options: HttpWorkerResolverOptions): WorkerResolver {
  const api = ky.create({
    timeout: options.timeoutMs ?? 5_000,
    retry: TRANSIENT_READ_RETRY,
    redirect: "error",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const url = new URL(ROUTE, options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
  return {
    resolve: async (scope, signal) => {
      let response: Response;
      try {
        response = await api(url, {
          headers: {
            ...(await options.memberHeaders?.(scope)),
            "x-openwork-org-id": scope.organizationId,
            "x-openwork-gateway-key": options.gatewayKey,
          },
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        if (error instanceof HTTPError) return refused(error.response, url, options.memberHeaders !== undefined);
        throw error;
      }
      return toResolution(ResolveResponseSchema.parse(await response.json()));
    },
  };
}

/** den-api's refusal, turned into what the operator must fix; a member without access is the member's own. */
async function refused(response: Response, url: URL, hasMemberHeaders: boolean): Promise<WorkerResolution> {
  const body = RefusalSchema.safeParse(await response.json().catch(() => null));
  const code = body.success ? (body.data.error ?? body.data.code ?? `http_${response.status}`) : "not_json";
  if (response.status === 403 && code === "openwork_web_access_required") return { status: "failed", reason: code };
  if (response.status >= 500 || response.status === 429 || response.status === 408) throw new Error(`the worker resolver answered ${response.status}`);
  throw new ResolverConfigurationError(response.status, code, fixFor(response.status, code, url, hasMemberHeaders));
}

function fixFor(status: number, code: string, url: URL, hasMemberHeaders: boolean): string {
  if (code === "not_json")
    return `nothing at ${url.origin}${url.pathname} answers like den-api: check the resolver's base URL (den-api's, with /api/den behind the web proxy)`;
  if (status === 404) {
    return "den-api refused the gateway key or has OpenWork Cloud off: check that the gateway key is den-api's (X-OpenWork-Gateway-Key) and that cloud is enabled on that deployment";
  }
  if (status === 401) {
    return hasMemberHeaders
      ? "den-api did not accept the member's credentials: check what memberHeaders sends (den-api's session or API key of the member)"
      : "den-api authenticates the member from the request's credentials: give createHttpWorkerResolver memberHeaders (the member's den-api session or API key)";
  }
  return `den-api refused the gateway (${status} ${code}): check the gateway key and the member credentials it sends`;
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
