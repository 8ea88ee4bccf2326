import {
  createRunnerClient,
  RUNNER_CAPABILITIES,
  RUNNER_PROTOCOL_VERSION,
  type RunnerLogger,
  requestRunnerToken,
  runRunner,
  type TokenMintResponse,
} from "@openwork/runner-protocol";
import type { LocalEngine } from "./local-engine.js";
import { createRunnerHandlers } from "./runner-handlers.js";

export interface DesktopRunnerOptions {
  gatewayUrl: string;
  /** The signed-in member's session token (what the desktop app holds). */
  memberToken: string;
  runnerId: string;
  name: string;
  engine: LocalEngine;
  logger?: RunnerLogger;
  pollIntervalMs?: number;
}

// Renew well before the 12 h expiry, as the Electron renderer does every 30 minutes.
const RENEW_EVERY_MS = 30 * 60_000;

/**
 * Signs in the runner (mints its token with the member's credential), renews the token, and
 * runs the runner loop. When the gateway retires the token (401/403, a restart with a new
 * secret), a fresh one is minted. Returns `stop()`.
 */
export async function startDesktopRunner(options: DesktopRunnerOptions): Promise<{ stop(): Promise<void>; wake(): void }> {
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
  let current: TokenMintResponse = await mint();
  let minting: Promise<void> | null = null;
  const renew = () => {
    minting ??= mint()
      .then((fresh) => {
        current = fresh;
      })
      .catch((error: unknown) => options.logger?.warn("desktop runner: token renewal failed", { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        minting = null;
      });
  };
  const timer = setInterval(renew, RENEW_EVERY_MS);
  const client = createRunnerClient({ baseUrl: options.gatewayUrl, token: () => current.token });
  const runner = runRunner({
    client,
    handlers: createRunnerHandlers(options.engine),
    gatewayProtocolVersion: current.protocolVersion,
    onCredentialRetired: renew,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
  });
  return {
    wake: () => runner.wake(),
    stop: async () => {
      clearInterval(timer);
      await runner.stop();
    },
  };
}
