import type { Logger, MemberScope, Model } from "@openwork/remote-session-core";
import type { RunnerTokenSecret } from "@openwork/runner-protocol";
import type { Sql } from "postgres";
import type { WakeHub } from "../wake/wake-hub.js";

/** What the host gives the runner routes. */
export interface RunnerRoutesOptions {
  sql: Sql;
  hub: WakeHub;
  /** HMAC secret of runner tokens (≥ 32 bytes). */
  secret: RunnerTokenSecret;
  /** The gateway's public base URL: the audience of every token these routes mint and accept. */
  baseUrl: string;
  /** Route prefixes. Default `/v1/desktop-runner` and `/v1/automation-runner`. */
  prefixes?: string[];
  /** The signed-in member of a request to the member routes (token, presence), or null. */
  authenticateMember(request: Request): Promise<MemberScope | null>;
  /** Whether the member is still active; asked on every runner request and every 15 s on streams. */
  isActiveMember(scope: MemberScope): Promise<boolean>;
  /** Whether the member may still use a task's model; asked at claim. Default: yes. */
  mayUseModel?(scope: MemberScope, model: Model): Promise<boolean>;
  /** Lease granted by a claim or heartbeat. Default 30 s. */
  leaseMs?: number;
  /** Heartbeat interval the runner is told. Default 10 s. */
  heartbeatIntervalMs?: number;
  /** Keepalive interval of the SSE stream. Default 15 s. */
  keepaliveMs?: number;
  /** How often an open stream re-checks membership. Default 15 s. */
  membershipCheckMs?: number;
  /** Told of each first claim: how long the task waited for a runner (a dispatch-latency metric). */
  onClaimed?(waitedMs: number): void;
  logger?: Logger;
}

export type RouteContext = Required<Omit<RunnerRoutesOptions, "mayUseModel" | "prefixes" | "onClaimed">> &
  Pick<RunnerRoutesOptions, "mayUseModel" | "onClaimed">;
