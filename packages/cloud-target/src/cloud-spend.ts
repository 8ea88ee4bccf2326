import type { MessageWithParts } from "@openwork/opencode-client/internal";
import type { ObservedSpend } from "@openwork/remote-session-core";

/**
 * What a session's messages on its worker say it spent: each ended step's tokens and cost
 * (opencode's `step-finish` parts, cost in dollars), and the wall time of its replies — the one
 * still being written counted up to `now` while the turn runs. Totals, summed afresh at each look
 * (the core never records less than it had); undefined for a session with no replies yet.
 */
export function spendOfMessages(messages: readonly MessageWithParts[], running: boolean, now: number): ObservedSpend | undefined {
  const replies = messages.filter((message) => message.info.role === "assistant");
  if (replies.length === 0) return undefined;
  const spend: ObservedSpend = { tokensIn: 0, tokensOut: 0, runningMs: 0, reported: false };
  for (const { info, parts } of replies) {
    const ended = info.time.completed ?? (running ? now : info.time.created);
    spend.runningMs += Math.max(0, ended - info.time.created);
    for (const part of parts) {
      if (part.type !== "step-finish" || !part.tokens) continue;
      spend.reported = true;
      spend.tokensIn += part.tokens.input ?? 0;
      spend.tokensOut += part.tokens.output ?? 0;
      if (part.cost !== undefined) spend.costMicros = (spend.costMicros ?? 0) + Math.round(part.cost * 1_000_000);
    }
  }
  return spend;
}
