import { sseFrame } from "@openwork/remote-session-core/wire";
import type { WorkRunner } from "../../host-work-kind.js";
import type { RunnerIdentity } from "../../store/task-row.js";
import type { WakeNotice } from "../../wake/channels.js";

/** One Automation run in OpenWork's work listing (`GET /v1/automation-runner/work`). */
export interface OpenworkRunItem {
  runId: string;
  executionTarget: "desktop";
  workspaceId?: string | null;
}

/**
 * The host's Automation runs for the OpenWork desktops already installed, when this gateway serves
 * OpenWork's paths: the runs stay the host's (its table, its OpenWork-wire run routes), and the
 * OpenWork dialect lists them in the work listing, hands `/v1/automation-runs/*` to the host, and
 * wakes those desktops for them (`automation_work_available`). The same runs can be a work kind
 * of ours too: each is claimed once, by whichever desktop asks first.
 */
export interface OpenworkRuns {
  /** What every run id starts with (`arun_`): a wake-up for one of them is a hint to OpenWork desktops. */
  readonly idPrefix: string;
  /** The runs this desktop may claim now, oldest first, as den-api lists them. */
  workItems(runner: WorkRunner): Promise<readonly OpenworkRunItem[]>;
  /**
   * Answers `POST /v1/automation-runs/:id/claim|heartbeat|events|complete` as the host's own
   * Automation routes do, in OpenWork's wire (the host verifies the token: this channel's OpenWork
   * mint signs with the same secret).
   */
  fetch(request: Request): Promise<Response>;
}

/** An automation-only or session-only desktop: `remote_session_only_v1` tokens never see runs (OpenWork's rule). */
export const takesRuns = (runner: Pick<RunnerIdentity, "capabilities">): boolean => !runner.capabilities.includes("remote_session_only_v1");

/** The run items of a desktop's work listing: none without the host's runs or for a session-only desktop. */
export async function runItems(runs: OpenworkRuns | undefined, runner: RunnerIdentity): Promise<readonly OpenworkRunItem[]> {
  if (!runs || !takesRuns(runner)) return [];
  const { organizationId, memberId, runnerId, protocolVersion, capabilities } = runner;
  return runs.workItems({ organizationId, memberId, runnerId, protocolVersion, capabilities });
}

/** The stream frame that wakes an OpenWork desktop for one of the host's runs, as den-api frames it; null for anything else. */
export function runHint(runs: OpenworkRuns | undefined, runner: RunnerIdentity, notice: Pick<WakeNotice, "w" | "t">): string | null {
  if (!runs || !notice.t.startsWith(runs.idPrefix) || !takesRuns(runner)) return null;
  const cursor = String(notice.w);
  return sseFrame({ event: "automation_work_available", id: cursor, data: JSON.stringify({ type: "automation_work_available", cursor }) });
}
