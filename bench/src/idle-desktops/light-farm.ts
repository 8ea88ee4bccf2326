// A farm of light idle desktops for large N: node:http sending the wire traffic an idle desktop of
// the project's runner client sends, without undici's and ky's cost per client (on two cores the
// project's client costs about as much CPU as the gateway it measures past ~10 000 desktops).
// Each desktop: one SSE wake stream (`GET events`), dropped after 45 s of silence and reopened with
// the runner's backoff (0.25–0.75 s after a stream that carried bytes, growing with each failed
// open); an open refused with a 503 or 429 waits at least what the answer asks (the body's
// `retryAfterMs`, else its `Retry-After` seconds). And `POST tasks/claim-next` with `{}`: at start;
// at an open of the stream when its first event says work waits (protocol 5's
// `remote_session_stream_ready`; any other first event counts as yes); when the stream goes down,
// at a random point of the next 60 s — or, when the gateway gave the stream a turn, not before
// the turn (+ 5 s), and not at all if the stream is back by then; then every 10 min while the
// stream is healthy (DEFAULT_STREAM_POLL_INTERVAL_MS) and every 60 s while it is down; a failed
// claim is retried with the runner's backoff. controller.ts forks it and sends a FarmStart; it
// answers at once, opens at `openPerSecond`, and answers "stats".
import { type IncomingMessage, request } from "node:http";
import { DEFAULT_STREAM_POLL_INTERVAL_MS } from "@openwork/runner-protocol/client";
import type { FarmStart, FarmStats } from "./processes.js";

const DOWN_POLL_MS = 60_000;
const SILENCE_MS = 45_000;
const TURN_GRACE_MS = 5_000;
const CLAIM_BODY = "{}";

const requests: Record<string, number> = {};
const statuses: Record<string, number> = {};
const warns: Record<string, number> = {};
const bump = (counts: Record<string, number>, key: string) => void (counts[key] = (counts[key] ?? 0) + 1);
let started = 0;

/** The runner's backoff: 0.5 s·2^failures, at most 30 s, times [0.5, 1.5). */
const backoff = (failures: number) => Math.min(30_000, 500 * 2 ** Math.min(failures, 30)) * (0.5 + Math.random());

/** What a refused answer asks to wait: its body's `retryAfterMs`, else its `Retry-After` seconds, else null. */
function retryAfterOf(response: IncomingMessage, body: string): number | null {
  try {
    const parsed = JSON.parse(body) as { retryAfterMs?: unknown };
    if (typeof parsed.retryAfterMs === "number" && parsed.retryAfterMs >= 0) return parsed.retryAfterMs;
  } catch {
    // not JSON: the header says it, if anything does
  }
  const seconds = Number(response.headers["retry-after"]);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1_000 : null;
}

process.once("message", async (message) => {
  const { baseUrl, desktops, localAddress, openPerSecond } = message as FarmStart;
  const { hostname: host, port } = new URL(baseUrl);
  const connection = { host, port: Number(port), localAddress, agent: false as const };

  const runDesktop = (token: string) => {
    let streamOpen = false;
    // As the runner's wake stream: a stream that carried bytes resets its backoff, each failed open grows it.
    let streamFailures = 0;
    // When the gateway last gave the stream a turn (0: never); a reopening unanswered; where the look after a drop is.
    let turnAt = 0;
    let connecting = false;
    let afterDrop: "cut" | "answer" | "turn" | null = null;
    let pollTimer: NodeJS.Timeout | undefined;
    let pollFailures = 0;
    const schedule = (ms: number) => {
      clearTimeout(pollTimer);
      pollTimer = setTimeout(dueLook, ms);
    };
    // As the runner's rest after a drop: the random look waits for a reopening under way and for the stream's turn, and is dropped when the stream is back.
    const dueLook = () => {
      if (afterDrop !== null && streamOpen) {
        afterDrop = null;
        schedule(DEFAULT_STREAM_POLL_INTERVAL_MS);
        return;
      }
      const toTurn = turnAt + TURN_GRACE_MS - Date.now();
      if ((afterDrop === "cut" || afterDrop === "answer") && !streamOpen && toTurn > 0) {
        afterDrop = "turn";
        schedule(toTurn);
        return;
      }
      if (afterDrop === "cut" && connecting) {
        afterDrop = "answer";
        schedule(DOWN_POLL_MS);
        return;
      }
      look();
    };
    // One claim-next, then the next one at the interval of the stream's state (or the backoff).
    const look = () => {
      afterDrop = null;
      bump(requests, "tasks/claim-next");
      let settled = false;
      const settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        pollFailures = ok ? 0 : pollFailures + 1;
        schedule(ok ? (streamOpen ? DEFAULT_STREAM_POLL_INTERVAL_MS : DOWN_POLL_MS) : backoff(pollFailures - 1));
      };
      const claim = request(
        {
          ...connection,
          method: "POST",
          path: "/v1/desktop-runner/tasks/claim-next",
          headers: {
            authorization: `Bearer ${token}`,
            accept: "application/json",
            "content-type": "application/json",
            "content-length": Buffer.byteLength(CLAIM_BODY),
          },
        },
        (response) => {
          bump(statuses, `tasks/claim-next ${response.statusCode}`);
          response.resume();
          response.on("end", () => settle(response.statusCode === 200));
          response.on("error", () => settle(false));
        },
      );
      claim.setTimeout(30_000, () => claim.destroy(new Error("timeout")));
      claim.on("error", (error: NodeJS.ErrnoException) => {
        bump(warns, `tasks/claim-next ${error.code ?? error.message}`);
        settle(false);
      });
      claim.end(CLAIM_BODY);
    };
    // The reopening was answered: a look waiting for the answer decides again.
    const answered = () => {
      connecting = false;
      if (afterDrop === "answer") schedule(0);
    };
    const open = () => {
      bump(requests, "events");
      connecting = true;
      let ended = false;
      // Once per open, however it ends: reopen after `ms`.
      const reopen = (ms: number) => {
        if (ended) return;
        ended = true;
        if (connecting) answered();
        if (streamOpen) {
          streamOpen = false;
          // The runner's next look comes at a random point of its 60 s poll.
          afterDrop = "cut";
          schedule(Math.round(Math.random() * DOWN_POLL_MS));
        }
        setTimeout(open, ms);
      };
      const stream = request(
        { ...connection, path: "/v1/desktop-runner/events", headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } },
        (response) => {
          bump(statuses, `events ${response.statusCode}`);
          if (response.statusCode !== 200) {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (body += chunk));
            response.on("end", () => {
              const turn = retryAfterOf(response, body);
              if (turn !== null) turnAt = Date.now() + turn;
              reopen(Math.max(turn ?? 0, backoff(++streamFailures)));
            });
            response.on("error", () => reopen(backoff(++streamFailures)));
            return;
          }
          streamOpen = true;
          streamFailures = 0;
          answered();
          // The stream's first event says whether work waits (protocol 5): the runner looks only then;
          // "none" counts as a look (the poll's next comes 10 min later).
          let first = true;
          const silent = setTimeout(() => {
            bump(warns, "stream silent 45 s");
            stream.destroy();
          }, SILENCE_MS);
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            silent.refresh();
            if (!first || !chunk.includes("data:")) return;
            first = false;
            if (!chunk.includes('"remote_session_stream_ready","work":false')) look();
            else schedule(DEFAULT_STREAM_POLL_INTERVAL_MS);
          });
          response.on("close", () => {
            clearTimeout(silent);
            bump(warns, "stream ended");
            reopen(backoff(0));
          });
        },
      );
      stream.on("error", (error: NodeJS.ErrnoException) => {
        bump(warns, `stream ${error.code ?? error.message}`);
        reopen(backoff(++streamFailures));
      });
      stream.end();
    };
    look(); // the runner's loop looks once as it starts
    open();
  };

  process.on("message", (command: string) => {
    if (command === "stats") process.send!({ requests, statuses, warns, started, rss: process.memoryUsage().rss } satisfies FarmStats);
  });
  process.send!({ accepted: desktops.length });
  const batch = Math.max(1, Math.round(openPerSecond / 10));
  for (let i = 0; i < desktops.length; i += batch) {
    for (const { token } of desktops.slice(i, i + batch)) {
      started++;
      runDesktop(token);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
