import type { RunnerClient } from "@openwork/runner-protocol/client";

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

/**
 * The protocol-3 loop for a short task, as `runRunner` runs it against a gateway that answered 3:
 * one `claim-next` to start, then each `complete` carries the attempt's events and claims the next
 * task (a task shorter than the heartbeat interval sends no heartbeat). One request per task.
 */
export async function drainWithClaimNext(client: RunnerClient): Promise<{ done: number; conflicts: number }> {
  let done = 0;
  let assignment = await client.claimNext();
  while (assignment) {
    const { taskId, attempt } = assignment;
    const answer = await client.complete(taskId, {
      attempt,
      status: "done",
      localSessionId: `ses_${taskId}`,
      events: [
        { sequence: 1, type: "assistant.final", payload: { messageId: "m1", text: "done" } },
        { sequence: 2, type: "terminal", payload: { status: "done" } },
      ],
      next: {},
    });
    done++;
    // Its next claim named no kind of the host's: what it hands back is a remote-session task.
    assignment = (answer.next as typeof assignment | undefined) ?? (await client.claimNext());
  }
  return { done, conflicts: 0 };
}
