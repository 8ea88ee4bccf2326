import type { RunnerClient } from "@openwork/runner-protocol";

/**
 * Works through the offered tasks as runRunner does with one slot: try them in a random order
 * until one claim succeeds, run claim → heartbeat → events → complete, then look again. Returns
 * how many tasks it completed and how many claims it lost to other runners.
 */
export async function drainAsRunner(client: RunnerClient): Promise<{ done: number; conflicts: number }> {
  let done = 0;
  let conflicts = 0;
  for (;;) {
    const { items } = await client.work();
    if (items.length === 0) return { done, conflicts };
    for (const item of [...items].sort(() => Math.random() - 0.5)) {
      let attempt: number;
      try {
        attempt = (await client.claim(item.taskId)).attempt;
      } catch {
        conflicts++;
        continue;
      }
      await client.heartbeat(item.taskId, attempt);
      await client.postEvents(item.taskId, attempt, [{ sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: "done" } }]);
      await client.complete(item.taskId, { attempt, status: "done", localSessionId: `ses_${item.taskId}` });
      done++;
      break;
    }
  }
}
