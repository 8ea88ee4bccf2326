// The bench gateway (benchGateway: the reference gateway's wiring, real HTTP on 127.0.0.1) in a
// process of its own, so its CPU time can be read from /proc apart from the runners' and the
// benchmark's. turns-per-core.ts forks it with { databaseUrl, timings }; it answers { baseUrl }
// once serving, then runs the commands it is sent: mint runner tokens, queue turns (each pinned to
// one of the runners, round robin), tell how many statements its pool has sent, stop.
import { benchGateway } from "./gateway-fixture.js";

type Command = { mint: string[] } | { queue: number; runners: string[] } | "statements" | "stop";

const send = (message: unknown) => new Promise((resolve) => process.send!(message, resolve));

process.once("message", async (message) => {
  const { databaseUrl, timings } = message as { databaseUrl: string; timings: Record<string, number> };
  let statements = 0;
  const fixture = await benchGateway(databaseUrl, { timings }, () => void statements++);
  const deliverBy = new Date(Date.now() + 3_600_000).toISOString();
  process.on("message", async (command: Command) => {
    if (command === "stop") {
      await fixture.close();
      process.exit(0);
    }
    if (command === "statements") return void (await send({ statements }));
    if ("mint" in command) await send({ tokens: await Promise.all(command.mint.map((runnerId) => fixture.runnerToken(runnerId))) });
    if ("queue" in command) {
      // Store-and-forward (deliverBy), each turn on one desktop in turn: its wake hint goes to that runner alone.
      for (let i = 0; i < command.queue; i++) {
        const runner = command.runners[i % command.runners.length];
        const created = await fixture.execute("remote-session:create", { target: "desktop", runner, prompt: `turn ${i}`, deliverBy });
        if (created.isError) throw new Error(created.content[0]?.text);
      }
      await send({ queued: command.queue });
    }
  });
  await send({ baseUrl: fixture.gateway.baseUrl });
});
