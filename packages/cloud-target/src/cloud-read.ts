import type { LedgerSession, ReadResult, TargetCall } from "@openwork/remote-session-core";
import type { ReadInput } from "@openwork/remote-session-core/internal";
import { decodeCursor, sliceTranscript } from "@openwork/remote-session-core/target";
import { answeredAfter } from "@openwork/remote-session-core/internal";
import { type CloudContext, clientFor } from "./cloud-context.js";
import { lookAt } from "./cloud-look.js";
import { locate, sourceOf, webUrlOf } from "./cloud-ref.js";
import { delay } from "./delay.js";

export async function readCloudSession(ctx: CloudContext, call: TargetCall, session: LedgerSession, input: ReadInput): Promise<ReadResult> {
  const position = decodeCursor(session.id, input.cursor);
  // A read never waits for a waking worker longer than it asked to wait.
  const { client, worker } = await clientFor(ctx, call, input.waitMs);
  const { ref, remoteId } = locate(session);
  const source = sourceOf(worker, ref.workspaceId);
  const deadline = Date.now() + input.waitMs;
  // Listening starts before the first look, so nothing that happens after it is missed.
  const watch = input.waitMs > 0 ? ctx.events.watch(source, remoteId) : undefined;
  try {
    if (watch) await Promise.race([watch.connected, delay(Math.min(1_000, input.waitMs))]);
    for (;;) {
      const seen = watch?.version() ?? 0;
      const signals = watch?.signals() ?? ctx.events.peek(source, remoteId);
      const { transcript, view, spend } = await lookAt(ctx, client, ref.workspaceId, remoteId, session, signals);
      const settled = answeredAfter(transcript, position) || view.state !== "running" || Date.now() >= deadline || call.signal?.aborted;
      if (settled) {
        const slice = sliceTranscript({
          session,
          target: "cloud",
          state: view.state,
          transcript: { ...transcript, lastError: view.lastError ?? null },
          position,
          cursor: input.cursor,
          limit: input.limit,
          from: input.from,
          webUrl: webUrlOf(ctx, ref, remoteId),
        });
        return {
          ...slice,
          ...(view.pending ? { pending: view.pending } : {}),
          ...(view.retrying ? { fields: { retrying: view.retrying } } : {}),
          ...(spend ? { observedSpend: spend } : {}),
        };
      }
      const remaining = Math.max(0, deadline - Date.now());
      // Without a live stream, poll; with one, a turn that fails silently is still noticed once the grace passes.
      await (watch?.live() ? watch.changed(seen, Math.min(remaining, ctx.graceMs)) : delay(Math.min(ctx.readPollMs, remaining)));
    }
  } finally {
    watch?.close();
  }
}
