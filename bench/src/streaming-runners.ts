// Runners in a process of their own (members' machines) for turns-per-core.ts: one runRunner loop
// per token against a protocol-3 gateway, each turn streaming P text deltas STREAM_MS apart through
// the runner's EventOutbox, coalesced as asked. Counts its requests to the gateway by route and the
// turns that ended; answers "counts" with them and its CPU time, "stop" by stopping.
import { setTimeout as delay } from "node:timers/promises";
import { type Coalescing, createRunnerClient, runRunner } from "@openwork/runner-protocol/client";

interface Start {
  baseUrl: string;
  tokens: string[];
  p: number;
  streamMs: number;
  /** The runner's coalescing, or null: each delta waits for the previous one's post (P posts per turn, whatever the load). */
  coalescing: Coalescing | null;
}

// A window shorter than any spacing: with each delta emitted after the previous one's post, nothing merges.
const NO_MERGE: Coalescing = { windowMs: 1, maxWindowMs: 1 };
const counts: Record<string, number> = {};
/** Events posts answered, per task, and who waits for the next one. */
const posted = new Map<string, number>();
const waiting = new Map<string, () => void>();
let ended = 0;
const counted =
  (origin: string): typeof fetch =>
  async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin !== origin) return fetch(input, init);
    const route = url.pathname.replace(/rst_[0-9a-z]+/g, ":task").replace(/^.*\/desktop-runner/, "");
    counts[route] = (counts[route] ?? 0) + 1;
    const answer = await fetch(input, init);
    const taskId = /\/tasks\/(rst_[0-9a-z]+)\/events$/.exec(url.pathname)?.[1];
    if (taskId) {
      posted.set(taskId, (posted.get(taskId) ?? 0) + 1);
      waiting.get(taskId)?.();
    }
    return answer;
  };
const postsOf = (taskId: string, n: number) =>
  new Promise<void>((resolve) => {
    if ((posted.get(taskId) ?? 0) >= n) return resolve();
    waiting.set(taskId, () => {
      if ((posted.get(taskId) ?? 0) < n) return;
      waiting.delete(taskId);
      resolve();
    });
  });
const send = (message: unknown) => new Promise((resolve) => process.send!(message, resolve));
// A stopped runner's handler ends its wait at once (its turn is ending anyway).
const pause = (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }).catch(() => {});

process.once("message", async (message) => {
  const start = message as Start;
  const fetchCounted = counted(new URL(start.baseUrl).origin);
  const runners = start.tokens.map((token) =>
    runRunner({
      client: createRunnerClient({ baseUrl: start.baseUrl, token, fetch: fetchCounted }),
      gatewayProtocolVersion: 3,
      coalescing: start.coalescing ?? NO_MERGE,
      handlers: {
        "remote_session.create": async (assignment, { emit, signal }) => {
          for (let i = 1; i <= start.p && !signal.aborted; i++) {
            emit({ type: "assistant.delta", payload: { messageId: "m1", text: `word ${i} ` } });
            if (!start.coalescing) await postsOf(assignment.taskId, i);
            if (i < start.p) await pause(start.streamMs, signal);
          }
          posted.delete(assignment.taskId);
          return { status: "done", localSessionId: "ses_bench" };
        },
      },
      onTaskEnd: () => void ended++,
    }),
  );
  process.on("message", async (request) => {
    if (request === "counts") await send({ counts: { ...counts }, ended, cpu: process.cpuUsage() });
    if (request === "stop") {
      await Promise.all(runners.map((runner) => runner.stop()));
      process.exit(0);
    }
  });
  await send("ready");
});
