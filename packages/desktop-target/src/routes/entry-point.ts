import { normalizeAudience } from "@openwork/runner-protocol/internal";

/** Which forwarded headers to believe: proxies in front of the gateway (origins, no path). */
export interface ProxyTrust {
  /** Public origins of trusted proxies, e.g. `https://app.openwork.dev`. */
  origins: readonly string[];
  /** The path prefix such a proxy mounts the gateway under (OpenWork's web proxy: `/api/den`). */
  prefix: string;
}

const first = (value: string | null) => value?.split(",")[0]?.trim() || undefined;

/**
 * The base URL a request came through — what a desktop must use, so what a token minted on it
 * names as audience (OpenWork's derivation, §1.5 of the wire spec). Through a trusted proxy
 * (`X-Forwarded-Prefix` equal to its prefix, forwarded host and scheme naming a trusted origin):
 * that origin plus the prefix. Directly: the request URL, scheme and host replaced by trusted
 * forwarded values, with `routeSuffix` cut off its path. Null when the path does not end with it.
 */
export function entryPointOf(request: Request, routeSuffix: string, trust: ProxyTrust): string | null {
  const url = new URL(request.url);
  const proto = first(request.headers.get("x-forwarded-proto"));
  const scheme = proto === "http" || proto === "https" ? proto : url.protocol.slice(0, -1);
  const forwardedHost = first(request.headers.get("x-forwarded-host"));
  const trusted = new Set(trust.origins.map((o) => new URL(o).origin));
  const forwardedOrigin = forwardedHost ? safeOrigin(`${scheme}://${forwardedHost}`) : undefined;
  const prefix = first(request.headers.get("x-forwarded-prefix"))?.replace(/\/+$/, "");
  if (forwardedOrigin && trusted.has(forwardedOrigin) && prefix === trust.prefix.replace(/\/+$/, "")) {
    return normalizeAudience(`${forwardedOrigin}${prefix}`);
  }
  if (!url.pathname.endsWith(routeSuffix)) return null;
  const origin = forwardedOrigin && trusted.has(forwardedOrigin) ? forwardedOrigin : `${scheme}://${url.host}`;
  return normalizeAudience(`${origin}${url.pathname.slice(0, -routeSuffix.length)}`);
}

function safeOrigin(value: string): string | undefined {
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}
