import { RUNNER_CAPABILITIES, RUNNER_PROTOCOL_VERSION, type TokenMintResponse } from "@openwork/runner-protocol";
import { type Coalescing, createRunnerClient, RunnerProtocolError, type RunnerLogger, requestRunnerToken, runRunner } from "@openwork/runner-protocol/client";
import { type RunnerWorkspace, startInventoryReports } from "./inventory-reports.js";
import type { LocalEngine } from "./local-engine.js";
import { createRunnerHandlers } from "./runner-handlers.js";

export interface DesktopRunnerOptions {
  gatewayUrl: string;
  /** The signed-in member's session token (what the desktop app holds). */
  memberToken: string;
  runnerId: string;
  name: string;
  engine: LocalEngine;
  /**
   * The workspaces (projects) this desktop serves, the active one first: reported in its
   * inventory, where a create that names one runs, and what a worktree is made of. Default none:
   * the engine's own folder.
   */
  workspaces?: RunnerWorkspace[];
  /** How often the inventory is looked at again (sent only when it changed). Default 2 minutes. */
  inventoryIntervalMs?: number;
  logger?: RunnerLogger;
  pollIntervalMs?: number;
  /** How a streaming turn's events gather into posts (runRunner's default when left out). */
  coalescing?: Coalescing;
}

// Renew well before the 12 h expiry, as the Electron renderer does every 30 minutes.
const RENEW_EVERY_MS = 30 * 60_000;

/** Why a runner ended: it was stopped, or its owner revoked this desktop (a person must re-enable it). */
export type RunnerEnd = { reason: "stopped" } | { reason: "revoked"; message: string };

/** The gateway's answer to a mint for a desktop its owner revoked: minting again cannot help. */
export class DesktopRevokedError extends Error {
  override readonly name = "DesktopRevokedError";
}

const isRevoked = (error: unknown) => RunnerProtocolError.isInstance(error) && error.code === "runner_revoked";

/**
 * Signs in the runner (mints its token with the member's credential), renews the token, and
 * runs the runner loop. When the gateway retires the token (401/403, a restart with a new
 * secret), a fresh one is minted. When the mint answers that the desktop was revoked, the runner
 * stops and says what the person must do (`ended`); a first mint refused so throws
 * `DesktopRevokedError`. Returns `stop()`.
 */
export async function startDesktopRunner(options: DesktopRunnerOptions): Promise<{ stop(): Promise<void>; wake(): void; ended: Promise<RunnerEnd> }> {
  const mint = () =>
    requestRunnerToken({
      baseUrl: options.gatewayUrl,
      memberToken: options.memberToken,
      request: {
        runnerId: options.runnerId,
        name: options.name,
        platform: process.platform === "darwin" || process.platform === "win32" ? process.platform : "linux",
        appVersion: "reference-runner",
        protocolVersion: RUNNER_PROTOCOL_VERSION,
        capabilities: [...RUNNER_CAPABILITIES],
      },
    });
  let current: TokenMintResponse = await mint().catch((error: unknown) => {
    throw isRevoked(error) ? new DesktopRevokedError((error as Error).message) : error;
  });
  let minting: Promise<void> | null = null;
  let end: (ended: RunnerEnd) => void = () => {};
  const ended = new Promise<RunnerEnd>((resolve) => (end = resolve));
  const stop = async (why: RunnerEnd) => {
    clearInterval(timer);
    inventory.stop();
    await runner.stop();
    end(why);
  };
  const renew = () => {
    if (minting) return;
    minting = mint()
      .then((fresh) => {
        current = fresh;
      })
      .catch((error: unknown) => {
        // Minting again would only be refused again: stop, and say what the person must do.
        if (isRevoked(error)) {
          options.logger?.warn("desktop runner: this desktop was revoked; stopping", { step: (error as Error).message });
          return stop({ reason: "revoked", message: (error as Error).message });
        }
        options.logger?.warn("desktop runner: token renewal failed", { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        minting = null;
      });
  };
  const timer = setInterval(renew, RENEW_EVERY_MS);
  const client = createRunnerClient({ baseUrl: options.gatewayUrl, token: () => current.token });
  const runner = runRunner({
    client,
    handlers: createRunnerHandlers(options.engine, options.workspaces ?? [], options.logger),
    gatewayProtocolVersion: current.protocolVersion,
    onCredentialRetired: renew,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.coalescing ? { coalescing: options.coalescing } : {}),
  });
  // What this desktop has, at start and whenever it changed: a create may name a workspace instead
  // of the desktop. A runner given no workspaces says nothing (the gateway then knows nothing of
  // it, as of a runner from before inventories, rather than that it has none).
  const inventory =
    (options.workspaces ?? []).length === 0
      ? { stop: () => {} }
      : startInventoryReports({
          client,
          workspaces: options.workspaces ?? [],
          engine: options.engine,
          intervalMs: options.inventoryIntervalMs ?? 2 * 60_000,
          ...(options.logger ? { logger: options.logger } : {}),
        });
  return {
    wake: () => runner.wake(),
    stop: () => stop({ reason: "stopped" }),
    ended,
  };
}
