// A farm of idle signed-in desktops run by the project's runner client (createRunnerClient +
// runRunner with its defaults: one SSE wake stream each; claim-next at every open, then every
// 10 min while the stream is healthy and every 60 s while it is down), every socket from one
// loopback source address. controller.ts forks it (with --expose-internals, to bind the global
// fetch dispatcher to that address) and sends a FarmStart; it answers at once and opens its
// desktops at `openPerSecond`, then answers "stats" with a FarmStats.
import { createRequire } from "node:module";
import { RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, type Runner, runRunner } from "@openwork/runner-protocol/client";
import type { FarmStart, FarmStats } from "./processes.js";

const requests: Record<string, number> = {};
const statuses: Record<string, number> = {};
const warns: Record<string, number> = {};
const bump = (counts: Record<string, number>, key: string) => void (counts[key] = (counts[key] ?? 0) + 1);
const runners: Runner[] = [];

/** The route under the runner channel's prefix: `events`, `tasks/claim-next`, `tasks/:id/complete`… */
const routeOf = (url: string) =>
  new URL(url).pathname
    .split("/")
    .slice(3)
    .join("/")
    .replace(/tasks\/[^/]+\//, "tasks/:id/");

process.once("message", async (message) => {
  const { baseUrl, desktops, localAddress, openPerSecond } = message as FarmStart;
  // Node's fetch is undici's: its global dispatcher, rebuilt with a source address, is reached only through the internals.
  const undici = createRequire(import.meta.url)("internal/deps/undici/undici");
  const Agent = undici.getGlobalDispatcher().constructor;
  undici.setGlobalDispatcher(new Agent({ localAddress }));
  const counted: typeof fetch = async (input, init) => {
    const route = routeOf(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    bump(requests, route);
    const response = await fetch(input, init);
    bump(statuses, `${route} ${response.status}`);
    return response;
  };
  process.on("message", (command: string) => {
    if (command === "stats") {
      process.send!({ requests, statuses, warns, started: runners.length, rss: process.memoryUsage().rss } satisfies FarmStats);
    }
  });
  process.send!({ accepted: desktops.length });
  const batch = Math.max(1, Math.round(openPerSecond / 10));
  for (let i = 0; i < desktops.length; i += batch) {
    for (const { token } of desktops.slice(i, i + batch)) {
      runners.push(
        runRunner({
          client: createRunnerClient({ baseUrl, token, fetch: counted }),
          gatewayProtocolVersion: RUNNER_PROTOCOL_VERSION,
          logger: {
            info: () => {},
            warn: (line, fields) => bump(warns, `${line} ${String(fields?.code ?? "")} ${String(fields?.status ?? "")}`.trim()),
          },
          handlers: { "remote_session.create": async () => ({ status: "done", localSessionId: "ses_farm" }) },
        }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
