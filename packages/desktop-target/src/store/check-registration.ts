import type { Queryable } from "@openwork/remote-session-core";
import { ChannelRefusal } from "../channel-refusal.js";
import { dialectOf } from "../dialects/index.js";
import type { RunnerDialect } from "./runner-row.js";
import type { RunnerIdentity } from "./task-row.js";
import { recordTokenRunner, type TokenHolder, touchRunner } from "./touch-runner.js";

/** A runner request's verified identity. */
export type AuthenticatedRunner = RunnerIdentity & { expiresAt: number; dialect: RunnerDialect };

/** A runner request whose token and member are verified; its registration is checked by `checkRegistration`. */
export interface VerifiedRunner {
  holder: TokenHolder;
  expiresAt: number;
  dialect: RunnerDialect;
  /** The capabilities the token names (a dialect may take them from there; ours are the registration's). */
  tokenCapabilities: readonly string[];
}

/**
 * The runner is registered, not revoked since the mint, in this dialect. Its first statement is
 * sent when it is called, so a transaction can start it with others in one round trip.
 */
export async function checkRegistration(sql: Queryable, { holder, expiresAt, dialect, tokenCapabilities }: VerifiedRunner): Promise<AuthenticatedRunner> {
  const { authentication } = dialectOf(dialect);
  let registered = await touchRunner(sql, holder);
  if (!registered && authentication.recordsTokenRunner) {
    await recordTokenRunner(sql, holder, dialect);
    registered = await touchRunner(sql, holder);
  }
  if (!registered) throw new ChannelRefusal("runner_unauthorized", "runner token refused: runner not registered or revoked");
  if (registered.dialect !== dialect) throw new ChannelRefusal("runner_unauthorized", "runner token refused: registered for the other runner protocol");
  const capabilities = authentication.capabilitiesFrom === "token" ? [...tokenCapabilities] : registered.capabilities;
  const { organizationId, memberId, runnerId } = holder;
  return { organizationId, memberId, runnerId, capabilities, protocolVersion: registered.protocolVersion, expiresAt, dialect };
}
