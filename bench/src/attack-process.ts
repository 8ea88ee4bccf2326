// A flood of `pnpm attacks` in a process of its own, as an attacker is another machine: the
// gateway's process spends its CPU on the gateway (and the bystander's calls) only. attacks.ts
// forks it, sends a FloodSpec, hears { started } (and { finished } when all its requests are
// sent), later sends "stop" and hears { facts }.
import { type FloodSpec, startFlood } from "./attack-floods.js";

process.once("message", (spec) => {
  const flood = startFlood(spec as FloodSpec);
  process.send!({ started: true });
  void flood.done?.then(() => process.send!({ finished: true }));
  process.once("message", async () => {
    const facts = flood.facts();
    await flood.stop();
    process.send!({ facts }, () => process.exit(0));
  });
});
