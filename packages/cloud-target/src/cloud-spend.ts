import { type MessageWithParts, stepTokens } from "@openwork/opencode-client/internal";
import type { ObservedSpend } from "@openwork/remote-session-core";
import type { StepSpend } from "./worker-events.js";

/**
 * What a session's messages on its worker say it spent: each ended step's tokens (`stepTokens`:
 * cache reads and writes with the input, reasoning with the output) and cost (opencode's
 * `step-finish` parts, in dollars; a cost of 0 is an unpriced model's, as the desktop runner
 * reads it), and the wall time of its replies — the last one, while the turn `running`, counted
 * up to `now`; a reply left incomplete (its worker died mid-reply) counts nothing. Totals,
 * summed afresh at each look (the core never records less than it had); undefined for a session
 * with no replies yet.
 */
export function spendOfMessages(messages: readonly MessageWithParts[], running: boolean, now: number): ObservedSpend | undefined {
  const replies = messages.filter((message) => message.info.role === "assistant");
  if (replies.length === 0) return undefined;
  const spend: ObservedSpend = { tokensIn: 0, tokensOut: 0, runningMs: 0, reported: false };
  const last = replies.at(-1);
  for (const reply of replies) {
    const { info, parts } = reply;
    const ended = info.time.completed ?? (running && reply === last ? now : info.time.created);
    spend.runningMs += Math.max(0, ended - info.time.created);
    for (const part of parts) {
      if (part.type !== "step-finish" || !part.tokens) continue;
      const { inputTokens, outputTokens } = stepTokens(part.tokens);
      spend.reported = true;
      spend.tokensIn += inputTokens;
      spend.tokensOut += outputTokens;
      if (part.cost !== undefined && part.cost > 0) spend.costMicros = (spend.costMicros ?? 0) + Math.round(part.cost * 1_000_000);
    }
  }
  return spend;
}

/**
 * The ids of the step-finish parts `spendOfMessages` counted in `messages`; null when one has no
 * id (the steps the event stream heard could then not be told apart from them).
 */
export function countedSteps(messages: readonly MessageWithParts[]): Set<string> | null {
  const ids = new Set<string>();
  for (const { info, parts } of messages) {
    if (info.role !== "assistant") continue;
    for (const part of parts) {
      if (part.type !== "step-finish" || !part.tokens) continue;
      if (part.id === undefined) return null;
      ids.add(part.id);
    }
  }
  return ids;
}

/**
 * `spend` (a look's totals, counting the steps `counted`) with the steps the event stream heard
 * since that look added: what the session spent at least, known the moment a step ends, before
 * the next look reads the message list. A step the look counted is never added twice.
 */
export function withUnseenSteps(spend: ObservedSpend, counted: ReadonlySet<string>, steps: ReadonlyMap<string, StepSpend>): ObservedSpend {
  const total = { ...spend };
  for (const [partId, step] of steps) {
    if (counted.has(partId)) continue;
    total.reported = true;
    total.tokensIn += step.inputTokens;
    total.tokensOut += step.outputTokens;
    if (step.costMicros !== undefined) total.costMicros = (total.costMicros ?? 0) + step.costMicros;
  }
  return total;
}
