import { type Logger, silentLogger, type TargetCall } from "@openwork/remote-session-core";
import type { CloudTargetOptions } from "./cloud-target.js";
import { createWakeAndWait } from "./wake-and-wait.js";
import { createWorkerClient, type WorkerClient } from "./worker-client.js";
import { createWorkerEvents, type WorkerEvents } from "./worker-events.js";
import type { ReadyWorker } from "./worker-resolver.js";

/**
 * What a cloud Target's calls share. `options` is the object the host passed, read at each call
 * as before; the rest was resolved or opened once, when the target was made.
 */
export interface CloudContext {
  readonly options: CloudTargetOptions;
  readonly logger: Logger;
  readonly readPollMs: number;
  readonly graceMs: number;
  readonly events: WorkerEvents;
  readonly waitForWorker: ReturnType<typeof createWakeAndWait>;
  // Followed turns end when the target closes (their streams close with it; they would poll).
  readonly closing: AbortController;
}

export function createCloudContext(options: CloudTargetOptions): CloudContext {
  const logger = options.logger ?? silentLogger;
  const readPollMs = options.readPollMs ?? 500;
  const graceMs = options.turnStartGraceMs ?? 10_000;
  const events = options.events ?? createWorkerEvents({ logger, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const waitForWorker = createWakeAndWait({
    resolver: options.resolver,
    logger,
    ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
    ...(options.wakePollMs === undefined ? {} : { pollMs: options.wakePollMs }),
  });
  return { options, logger, readPollMs, graceMs, events, waitForWorker, closing: new AbortController() };
}

/** The member's worker, waited for at most `budgetMs` (default: the whole call budget). */
export async function clientFor(ctx: CloudContext, call: TargetCall, budgetMs?: number): Promise<{ client: WorkerClient; worker: ReadyWorker }> {
  const worker = await ctx.waitForWorker(call, budgetMs);
  const client = createWorkerClient(worker, {
    ...(ctx.options.fetch ? { fetch: ctx.options.fetch } : {}),
    ...(ctx.options.requestTimeoutMs ? { timeoutMs: ctx.options.requestTimeoutMs } : {}),
  });
  return { client, worker };
}

// The event streams this target opened (none it was handed: their owner closes those), so a
// host's process can end once it stops the target.
export function closeCloudContext(ctx: CloudContext): void {
  ctx.closing.abort();
  if (!ctx.options.events) ctx.events.close();
}
