const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * DNS-rebinding protection, as the MCP Streamable HTTP transport requires of servers: a browser
 * request (it carries `Origin`) must come from an allowed origin, and a gateway that serves on a
 * loopback address answers only requests addressed to a loopback host. Non-browser clients send
 * no `Origin` and pass. Returns the 403 to answer, or null.
 */
export function createRequestGuard(options: { baseUrl: string; allowedOrigins?: readonly string[] }) {
  const base = new URL(options.baseUrl);
  const origins = new Set([base.origin, ...(options.allowedOrigins ?? []).map((o) => new URL(o).origin)]);
  const loopbackOnly = LOOPBACK.has(base.hostname);
  return (request: Request): Response | null => {
    const origin = request.headers.get("origin");
    if (origin !== null && !origins.has(origin)) return forbidden("this origin may not call the gateway");
    if (loopbackOnly) {
      const host = request.headers.get("host") ?? "";
      const hostname = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
      if (!LOOPBACK.has(hostname.toLowerCase())) return forbidden("this gateway answers only requests addressed to its loopback host");
    }
    return null;
  };
}

const forbidden = (message: string) => Response.json({ error: "forbidden", message }, { status: 403 });
