import type { Logger } from "@openwork/remote-session-core";
import type { SessionLedger } from "@openwork/remote-session-core/internal";
import type { Sql } from "postgres";
import type { TaskWaitDeps } from "./await-task.js";
import type { DesktopTargetOptions } from "./desktop-target.js";
import type { DesktopTimings } from "./desktop-timings.js";
import type { DialectSet } from "./dialects/dialect-set.js";
import type { TransactionScope } from "./store/transaction.js";
import type { WakeHub } from "./wake/wake-hub.js";

/** What the desktop Target's methods share, built once by `createDesktopTarget`. */
export interface DesktopContext {
  sql: Sql;
  hub: WakeHub;
  /** The store the target's transactions write through. */
  store: TransactionScope;
  /** What a relayed read or stop, and an answer, wait with: the store, the hub, `relayWaitMs`. */
  relay: TaskWaitDeps;
  timings: Pick<DesktopTimings, "presenceWindowMs" | "claimDeadlineMs" | "relayWaitMs">;
  ledger: SessionLedger;
  logger: Logger;
  dialects: DialectSet;
  webUrl: DesktopTargetOptions["webUrl"];
}
