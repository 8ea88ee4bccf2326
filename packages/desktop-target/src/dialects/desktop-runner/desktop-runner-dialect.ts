import { sseComment } from "@openwork/remote-session-core/wire";
import { canRunnerTake, RUNNER_ROUTE_PREFIX, STREAM_READY_PROTOCOL, wakeFrame } from "@openwork/runner-protocol/internal";
import type { TaskKind } from "../../store/task-row.js";
import type { Dialect } from "../dialect.js";
import { desktopRunnerRoutes } from "./desktop-runner-routes.js";

/** Our protocol's kinds: a runner of it relays nothing; its capabilities say which it takes. */
const OUR_KINDS: readonly TaskKind[] = ["remote_session.create", "remote_session.send", "remote_session.respond"];

/**
 * Our protocol (`@openwork/runner-protocol`, under `/v1/desktop-runner`): versions and
 * capabilities negotiated at the mint and kept in the registration, tokens bound to an entry point
 * of this gateway, work hints on the wake stream, presence by the stream.
 */
export const desktopRunnerDialect = {
  name: "desktop-runner",
  kindsTaken: () => OUR_KINDS,
  canTake: (runner, _kind, requirements) => canRunnerTake({ protocolVersion: runner.protocolVersion, capabilities: runner.capabilities }, requirements).ok,
  eligibility: (sql, runner) =>
    sql`t.kind = any(${OUR_KINDS}::text[]) and t.required_protocol <= ${runner.protocolVersion} and t.required_capabilities <@ ${runner.capabilities}::text[]`,
  authentication: { checksAudience: true, lostMembership: "membership_required", recordsTokenRunner: false, capabilitiesFrom: "registration" },
  // Work hints with ids, JSON keepalives; a runner of protocol 5 is told at the opening whether work waits.
  framing: {
    opening: sseComment("open"),
    keepalive: wakeFrame({ type: "keepalive" }),
    hints: true,
    ready: {
      reads: (runner) => runner.protocolVersion >= STREAM_READY_PROTOCOL,
      frame: (work) => wakeFrame({ type: "remote_session_stream_ready", work }),
    },
  },
  presence: "stream",
  reportsProgress: false,
  holdsByCommand: false,
  routes: (ctx, options) => {
    const prefix = (options.prefix ?? RUNNER_ROUTE_PREFIX).replace(/\/+$/, "");
    return { app: desktopRunnerRoutes(ctx, { prefix, presenceWindowMs: options.presenceWindowMs }), bases: [prefix], prefixes: [prefix] };
  },
} as const satisfies Dialect;
