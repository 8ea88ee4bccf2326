import { bearerToken, verifyRunnerToken } from "@openwork/runner-protocol/server";
import type { MiddlewareHandler } from "hono";
import { type MemberGate, rateLimited } from "./member-gate.js";
import type { MemberLimits } from "./member-limits.js";
import { createOpenSchedule, type ProcessLimits } from "./process-limits.js";

// A refusal is answered after the wait it names, up to this: a client looping on its 429s
// (a flood) is slowed to its own concurrency a second, at the cost of a timer.
const MAX_ANSWER_DELAY_MS = 1_000;

// A desktop past the process's stream budget comes back in 30–90 s: streams free up as desktops leave.
const FULL_RETRY_MS = { min: 30_000, spread: 60_000 };

/**
 * Runner wake-stream opens (`GET …/events`, both dialects) past their runner token's rate or
 * their member's are refused with a 429 before the runner routes run: the token's signature is
 * checked here (CPU only), and the routes' registration lookup — a database round trip per open —
 * is never reached by a flood. The 429 comes after min(retryAfterMs, 1 s), which an honest
 * runner waits anyway. A token that does not verify passes on and is refused there, also without
 * the database. Then the process's own budgets (`ProcessLimits`): past its streams, or past its
 * open rate, a 503 `unavailable` tells the desktop when to come back. Middleware in front of the
 * runner routes.
 */
export function createRunnerStreamGate(options: {
  gate: MemberGate;
  limits: Pick<MemberLimits, "runnerStreamOpensPerToken" | "runnerStreamOpensPerMember">;
  process: ProcessLimits;
  /** The wake streams this process holds now. */
  streamsOpen: () => number;
  secret: string;
  /** Told of each refusal (metrics). */
  refused?: () => void;
  random?: () => number;
}): MiddlewareHandler {
  // Opens admitted and not yet streaming (their registration is being read) count against the
  // budget too, or a burst of opens would all pass it together.
  const opening = { count: 0 };
  const refusal = refusalOf({ ...options, streamsOpen: () => options.streamsOpen() + opening.count });
  return async (c, next) => {
    if (!isStreamOpen(c.req.raw)) return next();
    const refused = await refusal(c.req.raw);
    if (refused) return refused;
    opening.count++;
    try {
      await next();
    } finally {
      opening.count--;
    }
  };
}

const isStreamOpen = (request: Request) => request.method === "GET" && new URL(request.url).pathname.endsWith("/events");

/** The 429 or 503 a runner-stream open (`isStreamOpen`) past a rate or the stream budget gets (a 429 after its delay), or null to go on. */
function refusalOf(options: Parameters<typeof createRunnerStreamGate>[0]) {
  const { gate, limits } = options;
  const random = options.random ?? Math.random;
  const opens = createOpenSchedule(options.process.runnerStreamOpens, { random });
  const processRefusal = (): Response | null => {
    if (options.streamsOpen() >= options.process.runnerStreams) {
      options.refused?.();
      return unavailable(
        "this gateway process holds all the wake streams it may; retry after retryAfterMs (its work is still served by polls)",
        FULL_RETRY_MS.min + Math.floor(random() * FULL_RETRY_MS.spread),
      );
    }
    const turn = opens.take();
    if (turn === null) return null;
    options.refused?.();
    return unavailable("this gateway process is opening many wake streams; retry after retryAfterMs", turn);
  };
  return (request: Request): Promise<Response> | Response | null => {
    const verified = verifyRunnerToken(bearerToken(request.headers.get("authorization")), { secret: options.secret });
    if (!verified.ok) return null;
    const { o, m, r, e } = verified.claims;
    // A token is its runner and its expiry: each mint is a new one.
    const wait =
      gate.take(`runner-token\u0000${o}\u0000${m}\u0000${r}\u0000${e}`, limits.runnerStreamOpensPerToken) ??
      gate.take(`runner-member\u0000${o}\u0000${m}`, limits.runnerStreamOpensPerMember);
    if (wait === null) return processRefusal();
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

/** The runner protocol's 503: the body's `retryAfterMs` exact, the header's seconds rounded up. */
function unavailable(message: string, retryAfterMs: number): Response {
  return Response.json(
    { error: "unavailable", message, retryAfterMs },
    { status: 503, headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1_000))), connection: "close" } },
  );
}
