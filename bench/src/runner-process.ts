// Runner clients in a process of their own, as runners live on their own machines: the gateway's
// process spends its CPU on the gateway only. throughput.ts forks it and sends { baseUrl, tokens, loop }.
import { createRunnerClient } from "@openwork/runner-protocol/client";
import { drainAsRunner, drainWithClaimNext } from "./drain-as-runner.js";
import { cpuMsSince } from "./process-cpu.js";

process.once("message", async (message) => {
  const { baseUrl, tokens, loop } = message as { baseUrl: string; tokens: string[]; loop: "listed" | "next" };
  let requests = 0;
  const counted: typeof fetch = (input, init) => {
    requests++;
    return fetch(input, init);
  };
  const drain = loop === "next" ? drainWithClaimNext : drainAsRunner;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const outcomes = await Promise.all(tokens.map((token) => drain(createRunnerClient({ baseUrl, token, fetch: counted }))));
  const sent = new Promise((resolve) =>
    process.send!(
      {
        done: outcomes.reduce((n, o) => n + o.done, 0),
        conflicts: outcomes.reduce((n, o) => n + o.conflicts, 0),
        requests,
        seconds: (performance.now() - started) / 1000,
        cpuMs: cpuMsSince(cpu),
      },
      resolve,
    ),
  );
  await sent;
  process.exit(0);
});
