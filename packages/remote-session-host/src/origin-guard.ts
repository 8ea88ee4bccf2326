import type { MiddlewareHandler } from "hono";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * DNS-rebinding protection, as the MCP Streamable HTTP transport requires of servers: a browser
 * request (it carries `Origin`) must come from an allowed origin, and a host that serves on a
 * loopback address answers only requests addressed to a loopback host. Non-browser clients send
 * no `Origin` and pass. Mount it before every route: `app.use("*", originGuard(...))`.
 */
export function originGuard(options: { baseUrl: string; allowedOrigins?: readonly string[] }): MiddlewareHandler {
  const base = new URL(options.baseUrl);
  const origins = new Set([base.origin, ...(options.allowedOrigins ?? []).map((o) => new URL(o).origin)]);
  const loopbackOnly = LOOPBACK.has(base.hostname);
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !origins.has(origin)) return forbidden("this origin may not call the gateway");
    if (loopbackOnly && !LOOPBACK.has(hostnameOf(c.req.header("host") ?? ""))) {
      return forbidden("this gateway answers only requests addressed to its loopback host");
    }
    await next();
  };
}

/** The host header's name without its port (`[::1]:80` → `[::1]`). */
function hostnameOf(host: string): string {
  return (host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!).toLowerCase();
}

const forbidden = (message: string) => Response.json({ error: "forbidden", message }, { status: 403 });
