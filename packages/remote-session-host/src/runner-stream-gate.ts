import { bearerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import type { MiddlewareHandler } from "hono";
import { type MemberGate, rateLimited } from "./member-gate.js";
import type { MemberLimits } from "./member-limits.js";

// A refusal is answered after the wait it names, up to this: a client looping on its 429s
// (a flood) is slowed to its own concurrency a second, at the cost of a timer.
const MAX_ANSWER_DELAY_MS = 1_000;

/**
 * Runner wake-stream opens (`GET …/events`, both dialects) past their runner token's rate or
 * their member's are refused with a 429 before the runner routes run: the token's signature is
 * checked here (CPU only), and the routes' registration lookup — a database round trip per open —
 * is never reached by a flood. The 429 comes after min(retryAfterMs, 1 s), which an honest
 * runner waits anyway. A token that does not verify passes on and is refused there, also without
 * the database. Middleware in front of the runner routes.
 */
export function createRunnerStreamGate(options: {
  gate: MemberGate;
  limits: Pick<MemberLimits, "runnerStreamOpensPerToken" | "runnerStreamOpensPerMember">;
  secret: string;
  /** Told of each refusal (metrics). */
  refused?: () => void;
}): MiddlewareHandler {
  const refusal = refusalOf(options);
  return async (c, next) => (await refusal(c.req.raw)) ?? next();
}

/** The 429 a runner-stream open past its rates gets (after its delay), or null to go on. */
function refusalOf(options: Parameters<typeof createRunnerStreamGate>[0]) {
  const { gate, limits } = options;
  return (request: Request): Promise<Response> | null => {
    if (request.method !== "GET" || !new URL(request.url).pathname.endsWith("/events")) return null;
    const verified = verifyRunnerToken(bearerToken(request.headers.get("authorization")), { secret: options.secret });
    if (!verified.ok) return null;
    const { o, m, r, e } = verified.claims;
    // A token is its runner and its expiry: each mint is a new one.
    const wait =
      gate.take(`runner-token\u0000${o}\u0000${m}\u0000${r}\u0000${e}`, limits.runnerStreamOpensPerToken) ??
      gate.take(`runner-member\u0000${o}\u0000${m}`, limits.runnerStreamOpensPerMember);
    if (wait === null) return null;
    options.refused?.();
    const refusal = rateLimited("this runner opens its wake stream too often; retry after retryAfterMs", wait);
    return new Promise((resolve) => {
      const answer = () => {
        clearTimeout(timer);
        resolve(refusal);
      };
      const timer = setTimeout(answer, Math.min(wait, MAX_ANSWER_DELAY_MS));
      request.signal.addEventListener("abort", answer, { once: true });
    });
  };
}
