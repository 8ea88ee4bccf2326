import type { LedgerSession } from "../ledger/ledger-session.js";
import type { SessionLedger } from "../ledger/session-ledger.js";
import type { Logger } from "../logger.js";
import type { Model, ReadInput, SendInput } from "../session-inputs.js";
import { createRemoteSessions } from "../sessions.js";
import type { RespondInput } from "../pending-input.js";
import type { CreateResult, ReadResult, RespondResult, SendResult, StopResult, Target, TargetCall } from "../target.js";

/** One target driven as the capability drives it: through the core, which records the session rows. */
export interface TargetSessions {
  /** `create` with the target's own arguments flat beside the common ones, as callers write them. */
  create(call: TargetCall, input: { title: string; prompt?: string; model?: Model; [extra: string]: unknown }): Promise<CreateResult>;
  send(call: TargetCall, session: LedgerSession, input: Omit<SendInput, "idempotencyKey">): Promise<SendResult>;
  read(call: TargetCall, session: LedgerSession, input: Omit<ReadInput, "from"> & { from?: ReadInput["from"] }): Promise<ReadResult>;
  stop(call: TargetCall, session: LedgerSession): Promise<StopResult>;
  respond(call: TargetCall, session: LedgerSession, input: RespondInput): Promise<RespondResult>;
}

export function targetSessions(target: Target, ledger: SessionLedger, logger?: Logger): TargetSessions {
  const core = createRemoteSessions(ledger, logger);
  return {
    create: (call, { title, prompt, model, ...extra }) =>
      core.create(call, target, { title, ...(prompt ? { prompt } : {}), ...(model ? { model } : {}), extra }),
    send: (call, session, input) => core.send(call, target, session, input),
    read: (call, session, input) => core.read(call, target, session, input),
    stop: (call, session) => core.stop(call, target, session),
    respond: (call, session, input) => core.respond(call, target, session, input),
  };
}
