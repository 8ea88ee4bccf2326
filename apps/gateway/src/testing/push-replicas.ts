import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION } from "@openwork/runner-protocol";
import { createRunnerClient, type RunnerClient, requestRunnerToken } from "@openwork/runner-protocol/client";
import type { DevMember } from "../dev-members.js";
import type { serveGateway } from "../serve-gateway.js";

export type Replica = Awaited<ReturnType<typeof serveGateway>>;

/** `member`'s desktop `runnerId` reaching the gateway through `replica` (its token names that replica's URL). */
export async function desktopVia(replica: Replica, member: DevMember, runnerId: string): Promise<RunnerClient> {
  const { token } = await requestRunnerToken({
    baseUrl: replica.baseUrl,
    memberToken: member.sessionToken,
    request: {
      runnerId,
      name: "Push desktop",
      platform: "linux",
      appVersion: "test",
      protocolVersion: RUNNER_PROTOCOL_VERSION,
      capabilities: [...RUNNER_CAPABILITIES],
    },
  });
  return createRunnerClient({ baseUrl: replica.baseUrl, token });
}

/**
 * An SSE stream's messages (each frame's `data:` as JSON, with its `id:` when it has one) until
 * `until` says stop, `timeoutMs` passes or the stream ends (a cut one too: its replica went away).
 */
export async function sseMessages(response: Response, until: (seen: { id?: string; data: any }[]) => boolean, timeoutMs: number) {
  const reader = response.body!.getReader();
  const seen: { id?: string; data: any }[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (!until(seen) && Date.now() < deadline) {
      const chunk = await Promise.race([
        reader.read().catch(() => null),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), Math.max(1, deadline - Date.now()))),
      ]);
      if (!chunk || chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (data) seen.push({ ...(id ? { id } : {}), data: JSON.parse(data) });
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return seen;
}
