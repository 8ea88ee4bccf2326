import type { Queryable } from "@openwork/remote-session-core/internal";
import { ChannelRefusal } from "../channel-refusal.js";
import type { Dialect } from "../dialects/dialect.js";
import type { RunnerIdentity } from "./task-row.js";
import { type RegisteredRunner, recordTokenRunner, type TokenHolder, touchRunner } from "./touch-runner.js";

/** A runner request's verified identity. */
export type AuthenticatedRunner = RunnerIdentity & { expiresAt: number };

/** A runner request whose token and member are verified; its registration is read by `readRegistration`. */
export interface VerifiedRunner {
  holder: TokenHolder;
  expiresAt: number;
  dialect: Dialect;
  /** The capabilities the token names (a dialect may take them from there; ours are the registration's). */
  tokenCapabilities: readonly string[];
}

/**
 * The runner's registration for this token (marking it seen), recorded first when the dialect
 * registers runners from their tokens; refused when there is none or it was revoked since the
 * mint: what a registration cache keeps, and what `asAuthenticated` checks the token against.
 * Its first statement is sent when it is called, so a transaction can start it with others in
 * one round trip.
 */
export async function readRegistration(sql: Queryable, { holder, dialect }: Pick<VerifiedRunner, "holder" | "dialect">): Promise<RegisteredRunner> {
  let registered = await touchRunner(sql, holder);
  if (!registered && dialect.authentication.recordsTokenRunner) {
    await recordTokenRunner(sql, holder, dialect.name);
    registered = await touchRunner(sql, holder);
  }
  if (!registered) throw new ChannelRefusal("runner_unauthorized", "runner token refused: runner not registered or revoked");
  return registered;
}

/** The request's identity from its verified token and its runner's registration: refused when registered for another dialect. */
export function asAuthenticated({ holder, expiresAt, dialect, tokenCapabilities }: VerifiedRunner, registered: RegisteredRunner): AuthenticatedRunner {
  if (registered.dialect !== dialect.name) throw new ChannelRefusal("runner_unauthorized", "runner token refused: registered for the other runner protocol");
  const capabilities = dialect.authentication.capabilitiesFrom === "token" ? [...tokenCapabilities] : [...registered.capabilities];
  const { organizationId, memberId, runnerId } = holder;
  return { organizationId, memberId, runnerId, capabilities, protocolVersion: registered.protocolVersion, expiresAt, dialect };
}
