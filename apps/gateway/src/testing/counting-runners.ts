import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, requestRunnerToken, type Runner, runRunner } from "@openwork/runner-protocol/client";
import type { DevMember } from "../dev-members.js";

/**
 * Starts `count` runner loops for a member that count how often each session's create runs
 * (the fault tests' "exactly once"), each taking `workMs` per task.
 */
export async function startCountingRunners(options: {
  baseUrl: string;
  member: DevMember;
  idPrefix: string;
  count: number;
  pollIntervalMs: number;
  workMs: number;
  retryLimit: number;
  backoffMaxMs: number;
}): Promise<{ runs: Map<string, number>; stop(): Promise<void> }> {
  const runs = new Map<string, number>();
  const backoff = { baseMs: 50, maxMs: options.backoffMaxMs, random: () => 0.5 };
  const runners: Runner[] = [];
  for (let i = 0; i < options.count; i++) {
    const minted = await requestRunnerToken({
      baseUrl: options.baseUrl,
      memberToken: options.member.sessionToken,
      request: {
        runnerId: `${options.idPrefix}-${i}`,
        name: `r${i}`,
        platform: "linux",
        appVersion: "1",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: [...RUNNER_CAPABILITIES],
      },
    });
    runners.push(
      runRunner({
        client: createRunnerClient({ baseUrl: options.baseUrl, token: minted.token, retry: { limit: options.retryLimit, backoff } }),
        // The same backstop with the stream open: these tests lose hints on purpose (a bus killed).
        pollIntervalMs: options.pollIntervalMs,
        streamPollIntervalMs: options.pollIntervalMs,
        backoff,
        handlers: {
          "remote_session.create": async (task) => {
            runs.set(task.sessionId, (runs.get(task.sessionId) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, options.workMs));
            return { status: "done", localSessionId: `ses_${task.taskId}` };
          },
        },
      }),
    );
  }
  return { runs, stop: async () => void (await Promise.all(runners.map((r) => r.stop()))) };
}
