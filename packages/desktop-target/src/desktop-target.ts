import { createSessionLedger, type Logger, newId, silentLogger, type Target } from "@openwork/remote-session-core";
import type { Sql } from "postgres";
import { desktopAvailability } from "./desktop-availability.js";
import type { DesktopContext } from "./desktop-context.js";
import { DESKTOP_CREATE_ARGUMENTS } from "./desktop-create-arguments.js";
import { desktopCreate } from "./desktop-create.js";
import { DESKTOP_ERRORS } from "./desktop-errors.js";
import { desktopRead } from "./desktop-read.js";
import { desktopRespond } from "./desktop-respond.js";
import { DESKTOP_ARGUMENT_ALIASES, DESKTOP_RESULT_FIELDS } from "./desktop-result-fields.js";
import { desktopSend } from "./desktop-send.js";
import { desktopStop } from "./desktop-stop.js";
import { type DesktopTimings, resolveTimings } from "./desktop-timings.js";
import { builtInDialects, createDialectSet, type DialectSet } from "./dialects/index.js";
import type { WakeHub } from "./wake/wake-hub.js";
import { sessionOfReceipt } from "./store/session-of-receipt.js";

export { MAX_QUEUED_TURNS } from "./desktop-send.js";

export interface DesktopTargetOptions {
  sql: Sql;
  /** The process's wake hub: `read` with `waitMs` waits on it instead of polling the database. */
  hub: WakeHub;
  /**
   * The channel's timings the target uses: the presence window (who is online), the claim
   * deadline of a task without `deliverBy`, the wait of a relayed read or stop. Default:
   * `DEFAULT_DESKTOP_TIMINGS`; `createDesktopChannel` passes the ones it resolved.
   */
  timings?: Partial<Pick<DesktopTimings, "presenceWindowMs" | "claimDeadlineMs" | "relayWaitMs">>;
  /** The OpenWork Web link of a session, when there is one. */
  webUrl?: (session: { sessionId: string; localSessionId: string | null }) => string | undefined;
  /** The dialects the channel knows (`builtInDialects()` by default); `createDesktopChannel` passes its own set. */
  dialects?: DialectSet;
  logger?: Logger;
}

/**
 * The desktop Target: sessions run on the member's signed-in OpenWork Desktop, reached only
 * through tasks the desktop pulls over the runner channel.
 */
export function createDesktopTarget(options: DesktopTargetOptions): Target {
  const ctx = desktopContext(options);
  return {
    specificationVersion: "v1",
    name: "desktop",
    label: "Desktop",
    description: "one of the member's signed-in OpenWork Desktop apps",
    // OpenWork's name for a desktop registered to the member.
    aliases: ["registered"],
    createArguments: DESKTOP_CREATE_ARGUMENTS,
    createArgumentAliases: DESKTOP_ARGUMENT_ALIASES,
    resultFields: DESKTOP_RESULT_FIELDS,
    errorCodes: DESKTOP_ERRORS.codes,
    // A follow-up runs with its own model when it names one (the desktop switches per turn).
    sendTakesModel: true,
    availability: (call) => desktopAvailability(ctx, call),
    create: (call, input) => desktopCreate(ctx, call, input),
    send: (call, session, input) => desktopSend(ctx, call, session, input),
    read: (call, session, input) => desktopRead(ctx, call, session, input),
    newMessageId: () => newId("msg"),
    stop: (call, session) => desktopStop(ctx, call, session),
    respond: (call, session, input) => desktopRespond(ctx, call, session, input),
    sessionOfReceipt: (call, receipt) => sessionOfReceipt(ctx.sql, call, receipt),
  };
}

/** What the target's methods share, resolved once from its options. */
function desktopContext(options: DesktopTargetOptions): DesktopContext {
  const { sql, hub } = options;
  const timings = resolveTimings(options.timings);
  const logger = options.logger ?? silentLogger;
  const dialects = options.dialects ?? createDialectSet(builtInDialects());
  const ledger = createSessionLedger(sql);
  // Its transactions' hints leave through the hub's publisher, on the hub's bus.
  const store = { sql, publisher: hub.publisher };
  const relay = { ...store, hub, waitMs: timings.relayWaitMs };
  return { sql, hub, store, relay, timings, ledger, logger, dialects, webUrl: options.webUrl };
}
