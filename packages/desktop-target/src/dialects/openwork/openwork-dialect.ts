import { sseFrame } from "@openwork/remote-session-core/wire";
import { runHint } from "./openwork-runs.js";
import type { TaskKind } from "../../store/task-row.js";
import type { Dialect } from "../dialect.js";
import { relayRead, relayStop } from "./openwork-relay.js";
import { OPENWORK_KIND_CAPABILITY } from "./openwork-kinds.js";
import { OPENWORK_PREFIXES, openworkRoutes } from "./openwork-routes.js";

/**
 * Where OpenWork's channel is served by default: at the root, and under `/api/den` — the base URL
 * an unmodified OpenWork desktop always uses (`<origin>/api/den`).
 */
export const OPENWORK_BASE_PATHS = ["", "/api/den"] as const;

const kindsTaken = (capabilities: readonly string[]): TaskKind[] =>
  (Object.keys(OPENWORK_KIND_CAPABILITY) as TaskKind[]).filter((kind) => capabilities.includes(OPENWORK_KIND_CAPABILITY[kind]!));

/**
 * What a task of ours may require of an OpenWork desktop: what its command and requests do
 * natively (creates, follow-ups, model variants). Anything else (a fresh worktree) it cannot do,
 * so such a task is never offered to it.
 */
const NATIVE_REQUIREMENTS: readonly string[] = ["session_create_v1", "session_followup_v1", "model_variant_v1"];

/** Whether the task asks nothing beyond what the desktop does natively and the capabilities in its token (a relayed request's). */
const meets = (capabilities: readonly string[], required: readonly string[]) =>
  required.every((c) => NATIVE_REQUIREMENTS.includes(c) || capabilities.includes(c));

// OpenWork's keepalive: `data: {}` with no id, the first at once. Automation work hints never
// come: this gateway runs no Automations.
const KEEPALIVE = sseFrame({ event: "keepalive", data: "{}" });

/**
 * OpenWork's runner channel, for the OpenWork desktops already installed: its own capability per
 * kind (model variants run natively), tokens as den-api checks them (any audience, the runner
 * recorded on its first request, the token's capabilities), a stream of keepalives only, and
 * presence by its polls. A create is its command: the desktop completes it once it has the turn,
 * then reports the turn's progress; it keeps the transcript, so reads and stops are relayed.
 */
export const openworkDialect = {
  name: "openwork",
  kindsTaken,
  canTake: (runner, kind, requirements) => kindsTaken(runner.capabilities).includes(kind) && meets(runner.capabilities, requirements.capabilities),
  eligibility: (sql, runner) =>
    sql`t.kind = any(${kindsTaken(runner.capabilities)}::text[]) and t.required_capabilities <@ ${[...NATIVE_REQUIREMENTS, ...runner.capabilities]}::text[]`,
  authentication: { checksAudience: false, lostMembership: "runner_unauthorized", recordsTokenRunner: true, capabilitiesFrom: "token" },
  // Keepalives, and a wake-up only for the host's Automation runs (when it hands them to this dialect).
  framing: { opening: KEEPALIVE, keepalive: KEEPALIVE, hints: false, hintOf: (ctx, runner, notice) => runHint(ctx.openworkRuns, runner, notice) },
  presence: "polls",
  reportsProgress: true,
  holdsByCommand: true,
  // The desktop keeps the transcript: reads and stops are requests to it.
  relay: {
    read: relayRead,
    stop: relayStop,
    answersInApp: "this OpenWork desktop takes answers to its permissions and questions only in the app: answer there",
  },
  routes: (ctx, options) => {
    const bases = [...new Set((options.openworkBasePaths ?? OPENWORK_BASE_PATHS).map((p) => p.replace(/\/+$/, "")))];
    const app = openworkRoutes({ ...ctx, sessionRunnerTargets: options.sessionRunnerTargets ?? (async () => false) });
    return { app, bases, prefixes: bases.flatMap((base) => OPENWORK_PREFIXES.map((prefix) => `${base}${prefix}`)) };
  },
} as const satisfies Dialect;
