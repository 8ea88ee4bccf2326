import { errorFacts, type Logger, sessionError, SessionFailure } from "@openwork/remote-session-core";
import type { Action } from "./parse-name.js";
import type { RegistryContext } from "./registry-context.js";

/**
 * One remote-session action that changed something (create, send, respond, stop), for the host's
 * audit log: who, what, which session, how it ended. Never prompt or answer text.
 */
export interface AuditEvent {
  action: Action;
  organizationId: string;
  userId: string;
  /** The caller's membership; null when the caller was not an active member (then refused). */
  memberId: string | null;
  /** The session acted on, when the call named or made one. */
  sessionId?: string;
  /** `ok`, or the error code the caller got. */
  outcome: string;
  referenceId: string;
}

/** An action about to run: the event without its outcome (a create names its session only after). */
export type AuditIntent = Omit<AuditEvent, "outcome">;

/**
 * A host's audit log that refuses what it cannot record (den-api's audited service actions):
 * `begin` stores the intent before the action runs; when it throws, the call is refused with a
 * retryable `audit_unavailable` and nothing runs — no session, no task, no prompt. `end` records
 * the outcome; the action has happened by then, so a failure there is logged, not the caller's.
 */
export interface AuditLog {
  begin(intent: AuditIntent): void | Promise<void>;
  end(event: AuditEvent): void | Promise<void>;
}

/** Either an after-the-fact hook (told of every outcome, refuses nothing) or a log that refuses. */
export type Audit = ((event: AuditEvent) => void | Promise<void>) | AuditLog;

/** What an audited call is about to do: its action, who asks, the session it names, its reference. */
export function auditIntent(ctx: RegistryContext, action: Action, fields: Record<string, unknown>): AuditIntent {
  return {
    action,
    organizationId: ctx.organizationId,
    userId: ctx.principal.userId,
    memberId: ctx.member?.orgMembershipId ?? null,
    ...(typeof fields.sessionId === "string" ? { sessionId: fields.sessionId } : {}),
    referenceId: String(fields.referenceId),
  };
}

/** The call's audit record, whatever it became. */
export function auditEvent(ctx: RegistryContext, action: Action, fields: Record<string, unknown>): AuditEvent {
  return { ...auditIntent(ctx, action, fields), outcome: String(fields.outcome) };
}

/** How long `begin` may take before the call is refused: a hung audit store holds no caller longer. */
export const DEFAULT_AUDIT_TIMEOUT_MS = 5_000;

/** Rejects after `ms`; the timer never keeps the process alive. */
function timeout(ms: number): { promise: Promise<never>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the audit log did not record the intent within ${ms} ms`)), ms);
    timer.unref?.();
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/**
 * Records the intent when the audit can refuse; its failure, or no answer within `timeoutMs`,
 * refuses the call before anything runs.
 */
export async function beginAudit(audit: Audit | undefined, intent: AuditIntent, logger: Logger, timeoutMs = DEFAULT_AUDIT_TIMEOUT_MS): Promise<void> {
  if (!audit || typeof audit === "function") return;
  const bound = timeout(timeoutMs);
  try {
    await Promise.race([audit.begin(intent), bound.promise]);
  } catch (error) {
    logger.error("remote session audit unavailable; call refused", { referenceId: intent.referenceId, action: intent.action, error: errorFacts(error) });
    throw new SessionFailure(
      sessionError("audit_unavailable", "the audit log could not record this call, so nothing was done; try again shortly", { retryAfterMs: 1_000 }),
    );
  } finally {
    bound.clear();
  }
}

/** Records the outcome. Never the caller's error: the action already ran (or was refused). */
export async function endAudit(audit: Audit, event: AuditEvent, logger: Logger): Promise<void> {
  try {
    await (typeof audit === "function" ? audit(event) : audit.end(event));
  } catch (error) {
    logger.error("remote session audit hook failed", { referenceId: event.referenceId, action: event.action, error: errorFacts(error) });
  }
}
