import { errorPayload, sessionError } from "@openwork/remote-session-core";
import type { McpAuth } from "./mcp-auth.js";
import type { Rate } from "./member-limits.js";

// Past this many keys, buckets idle for a minute (refilled: they hold nothing) are forgotten, at
// most once a minute: a sweep per take would cost a fleet signing in at once N² steps.
const PRUNE_AT = 10_000;
const PRUNE_EVERY_MS = 60_000;

/**
 * Token buckets of what each member or credential starts on this process (what stays open is
 * counted by `createMemberSlots`). CPU only: a flood is refused before it costs a database round trip.
 */
export function createMemberGate(now: () => number = Date.now) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  let prunedAt = now();
  const prune = () => {
    const t = now();
    if (buckets.size < PRUNE_AT || t - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = t;
    for (const [key, bucket] of buckets) if (t - bucket.at > PRUNE_EVERY_MS) buckets.delete(key);
  };
  return {
    /** Takes one start from `key`'s bucket: null when allowed, else how long until one is back (ms). */
    take(key: string, rate: Rate): number | null {
      prune();
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: rate.burst, at: t };
      bucket.tokens = Math.min(rate.burst, bucket.tokens + ((t - bucket.at) / 1_000) * rate.perSecond);
      bucket.at = t;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return null;
      }
      return Math.ceil(((1 - bucket.tokens) / rate.perSecond) * 1_000);
    },
    /** How many keys hold a bucket now. */
    size: () => buckets.size,
  };
}

export type MemberGate = ReturnType<typeof createMemberGate>;

/** Whose flood an MCP request is: the organization and the user of the verified token (else its client). */
export function mcpMemberKey(auth: McpAuth): string {
  const { organizationId, userId } = auth.extra ?? {};
  return typeof organizationId === "string" && typeof userId === "string" ? `${organizationId}\u0000${userId}` : `client\u0000${auth.clientId}`;
}

/** The typed 429 a refused member gets. */
export function rateLimited(message: string, retryAfterMs: number): Response {
  return Response.json(errorPayload(sessionError("rate_limited", message, { retryAfterMs })), {
    status: 429,
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1_000))) },
  });
}

/** `response` with `ended` called once when its body is done, cancelled or failed. */
export function whenBodyEnds(response: Response, ended: () => void): Response {
  if (!response.body) {
    ended();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const next = await reader.read().catch((error: unknown) => {
        ended();
        throw error;
      });
      if (!next.done) return controller.enqueue(next.value);
      ended();
      controller.close();
    },
    cancel: async (reason) => {
      ended();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
