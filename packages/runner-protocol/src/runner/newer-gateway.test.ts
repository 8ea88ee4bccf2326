import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRunnerClient, requestRunnerToken } from "../client/runner-client.js";
import { startProtocolDouble } from "../testing/protocol-double.js";
import { eventually } from "../testing/runner-channel-conformance.js";
import { unknownKey, unknownValue, withUnknownKey } from "../testing/unknown-fields.js";
import type { RespondAssignment } from "../v1/assignment.js";
import { RUNNER_PROTOCOL_VERSION } from "../v1/capabilities.js";
import { type RunRunnerOptions, runRunner } from "./run-runner.js";
import type { TaskOutcome } from "./run-task.js";

const fastBackoff = { baseMs: 5, maxMs: 20, random: () => 0.5 };
const model = { providerId: "anthropic", modelId: "claude-sonnet", variant: "high" };

/**
 * A fetch through which every JSON answer of the gateway carries `key: extra` in each of its
 * objects, at every depth, as a newer gateway's would, and each work listing offers a kind of
 * work no runner knows yet. The first claim is answered 503 with a typed error body (the same key
 * in each of its objects), so the error reading is crossed too.
 */
function newerGateway(key: string, extra: unknown): typeof fetch {
  let refusedOnce = false;
  return async (input, init) => {
    const request = new Request(input, init);
    if (!refusedOnce && /\/claim(-next)?$/.test(new URL(request.url).pathname)) {
      refusedOnce = true;
      const body = { error: "unavailable", message: "busy", retryAfterMs: 5, issues: [{ path: "", message: "later" }] };
      return Response.json(withUnknownKey(body, key, extra), { status: 503 });
    }
    const response = await fetch(request);
    if (!response.headers.get("content-type")?.includes("application/json")) return response;
    const text = await response.text();
    const answer = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>);
    // A work listing also offers a kind of work this runner has never heard of.
    if (Array.isArray(answer?.items)) answer.items.unshift({ taskId: "rst_future", kind: "remote_session.future" });
    const body = answer === undefined ? "" : JSON.stringify(withUnknownKey(answer, key, extra));
    return new Response(body, { status: response.status, headers: { "content-type": "application/json" } });
  };
}

/** Mints a token, runs one create (with a model) and one answer through a newer gateway, and returns what the handlers saw. */
async function runThroughNewerGateway(key: string, extra: unknown, gatewayProtocolVersion: number) {
  const double = await startProtocolDouble({ heartbeatIntervalMs: 100 });
  const fetch = newerGateway(key, extra);
  const runnerId = "runner-newer-gateway";
  const ended: TaskOutcome[] = [];
  let runner: ReturnType<typeof runRunner> | undefined;
  try {
    const minted = await requestRunnerToken({
      baseUrl: double.baseUrl,
      memberToken: double.memberToken,
      fetch,
      request: {
        runnerId,
        name: "desk",
        platform: "linux",
        appVersion: "1.0.0",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: ["session_create_v1", "session_respond_v1", "model_variant_v1"],
      },
    });
    const client = createRunnerClient({ baseUrl: double.baseUrl, token: minted.token, fetch, retry: { limit: 3, backoff: fastBackoff } });
    const seen: { model?: unknown; answer?: RespondAssignment["answer"] } = {};
    const options: RunRunnerOptions = {
      client,
      gatewayProtocolVersion,
      wakeStream: false,
      pollIntervalMs: 20,
      backoff: fastBackoff,
      onTaskEnd: (outcome) => ended.push(outcome),
      handlers: {
        "remote_session.create": async (assignment, { emit }) => {
          seen.model = assignment.model;
          // Long enough for a heartbeat answer to be read too.
          await new Promise((resolve) => setTimeout(resolve, 150));
          emit({ type: "assistant.final", payload: { messageId: "m1", text: "hi" } });
          return { status: "done", localSessionId: "ses_1" };
        },
        "remote_session.respond": async (assignment) => {
          seen.answer = assignment.answer;
          return { status: "done", localSessionId: assignment.localSessionId };
        },
      },
    };
    runner = runRunner(options);
    const turn = await double.enqueueCreate({ title: "t", prompt: "p", runnerId, model });
    const reply = await double.enqueueRespond({ runnerId, requestId: "que_1", answer: { text: "yes" } });
    await eventually(() => (ended.length === 2 ? true : undefined));
    return { ended, seen, turn: await double.inspect(turn.taskId), reply: await double.inspect(reply.taskId) };
  } finally {
    await runner?.stop();
    await double.close();
  }
}

describe("a runner and a newer gateway", () => {
  for (const version of [1, 3]) {
    it(`runs the task when every answer has an unknown field in each of its objects (protocol ${version})`, async () => {
      await fc.assert(
        fc.asyncProperty(unknownKey, unknownValue, async (key, extra) => {
          const { ended, seen, turn, reply } = await runThroughNewerGateway(key, extra, version);
          expect(ended.map((o) => o.status)).toEqual(["done", "done"]);
          expect(turn.state).toBe("done");
          expect(turn.events.map((e) => e.type)).toEqual(["assistant.final", "terminal"]);
          expect(reply.state).toBe("done");
          // What the runner read is what the gateway meant, the unknown field beside it.
          expect(seen.model).toMatchObject(model);
          expect(seen.answer).toMatchObject({ text: "yes" });
        }),
        { numRuns: 8 },
      );
    }, 60_000);
  }
});
