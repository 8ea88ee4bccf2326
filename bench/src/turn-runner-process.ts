// The reference desktop runner driving a real opencode, in a process of its own (a member's
// desktop), for turn-cost.ts: it counts the requests it sends the gateway, by route, and reports
// them with its CPU time when asked.
import type { Coalescing } from "@openwork/runner-protocol/client";

interface Start {
  gatewayUrl: string;
  memberToken: string;
  runnerId: string;
  opencode: { url: string; directory: string };
  coalescing: Coalescing;
}

const counts: Record<string, number> = {};
let gateway = "";
// Counted before any module could keep the original fetch: requests to the gateway, by route.
const fetchOf = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.origin === gateway) {
    const route = url.pathname.replace(/rst_[0-9a-z]+/g, ":task").replace(/^.*\/desktop-runner/, "");
    counts[route] = (counts[route] ?? 0) + 1;
  }
  return fetchOf(input, init);
};
const send = (message: unknown) => new Promise((resolve) => process.send!(message, resolve));

process.once("message", async (message) => {
  const start = message as Start;
  gateway = new URL(start.gatewayUrl).origin;
  const { createOpencodeEngine, startDesktopRunner } = await import("@openwork/desktop-runner");
  const runner = await startDesktopRunner({
    gatewayUrl: start.gatewayUrl,
    memberToken: start.memberToken,
    runnerId: start.runnerId,
    name: start.runnerId,
    engine: createOpencodeEngine(start.opencode),
    coalescing: start.coalescing,
  });
  process.on("message", async (request) => {
    if (request === "counts") await send({ counts: { ...counts }, cpu: process.cpuUsage() });
    if (request === "stop") {
      await runner.stop();
      process.exit(0);
    }
  });
  await send("ready");
});
