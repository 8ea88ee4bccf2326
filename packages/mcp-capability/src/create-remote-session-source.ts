import {
  CREATE_RATE_LIMIT,
  type Logger,
  newReferenceId,
  type RateLimit,
  type SessionError,
  sessionError,
  SessionFailure,
  type SessionLedger,
  silentLogger,
  type Target,
  toArgumentIssues,
} from "@openwork/remote-session-core";
import { z } from "zod";
import { CAPABILITIES } from "./capabilities/all-capabilities.js";
import type { Capability } from "./capabilities/capability.js";
import { type CapabilityContext, DEFAULT_POLICY, type RemoteSessionPolicy } from "./capability-context.js";
import { ACTIONS, type Action, capabilityName, parseName } from "./parse-name.js";
import { createRunEnv } from "./run-env.js";
import { scoreMatch } from "./score-match.js";
import { errorResult, successResult, type ToolResult } from "./to-tool-result.js";

/** A match in den-api's registry shape. */
export interface CapabilityMatch {
  name: string;
  summary: string;
  score: number;
  kind: "remote_session";
  method: "SESSION";
  path: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: true;
  readOnly: boolean;
  argumentsSchema: Record<string, unknown>;
  invocation: { argumentsField: "body" };
}

/** What execute receives: den-api's input (`body` may be a JSON string). */
export interface ExecuteInput {
  body?: unknown;
}

/** The capability source, in den-api's registry contract. */
export interface RemoteSessionSource {
  kind: "remoteSession";
  parseName(name: string): { action: Action } | null;
  search(ctx: CapabilityContext, query: string, limit: number): Promise<CapabilityMatch[]>;
  /** Remote sessions stay out of Code Mode scripts, as in OpenWork. */
  enumerate(ctx: CapabilityContext): { excluded: true };
  execute(ctx: CapabilityContext, parsed: { action: Action }, input: ExecuteInput): Promise<ToolResult>;
}

export interface RemoteSessionSourceOptions {
  /** The targets offered (`cloud`, `desktop`, …), handed in: this package imports none. */
  targets: readonly Target[];
  ledger: SessionLedger;
  policy?: Partial<RemoteSessionPolicy>;
  /** Creates per member per window. Default 32 a minute. */
  createRateLimit?: RateLimit;
  logger?: Logger;
}

/**
 * Creates the `remoteSession.*` capability source: search and execute for create, send, read,
 * list, stop and targets. Errors come back as `isError` values with a `referenceId`, never thrown.
 */
export function createRemoteSessionSource(options: RemoteSessionSourceOptions): RemoteSessionSource {
  const policy = { ...DEFAULT_POLICY, ...options.policy };
  const logger = options.logger ?? silentLogger;
  const schemas = new Map(ACTIONS.map((action) => [action, z.toJSONSchema(CAPABILITIES[action].args, { io: "input" }) as Record<string, unknown>]));

  const cloudAvailable = async (ctx: CapabilityContext & { memberId: string }) => {
    const cloud = options.targets.find((t) => t.name === "cloud");
    return cloud ? (await cloud.availability({ ...ctx, referenceId: newReferenceId() })).available : false;
  };
  /** Create's schema without the cloud target when the organization has cloud off. */
  const schemaFor = (action: Action, cloud: boolean) => {
    const schema = schemas.get(action)!;
    if (action !== "create" || cloud) return schema;
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    return { ...schema, properties: { ...properties, target: { ...properties.target, enum: ["desktop"], default: "desktop" } } };
  };

  return {
    kind: "remoteSession",
    parseName,
    enumerate: () => ({ excluded: true }),

    search: async (ctx, query, limit) => {
      if (!ctx.memberId || !ctx.scopes.includes(policy.scope)) return [];
      const cloud = await cloudAvailable({ ...ctx, memberId: ctx.memberId });
      return ACTIONS.map((action) => {
        const capability = CAPABILITIES[action];
        const summary = cloud ? capability.summary : capability.summary.replace("your cloud worker or one of your desktops", "one of your desktops");
        const name = capabilityName(action);
        return {
          name,
          summary,
          score: scoreMatch(query, { name, summary, keywords: capability.keywords }),
          kind: "remote_session" as const,
          method: "SESSION" as const,
          path: name,
          pathParams: [],
          queryParams: [],
          hasBody: true as const,
          readOnly: !capability.write,
          argumentsSchema: schemaFor(action, cloud),
          invocation: { argumentsField: "body" as const },
        };
      })
        .filter((match) => match.score > 0)
        .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
        .slice(0, Math.max(1, Math.min(20, limit)));
    },

    execute: async (ctx, parsed, input) => {
      const referenceId = newReferenceId();
      const started = performance.now();
      const capability = CAPABILITIES[parsed.action];
      const fields: Record<string, unknown> = { capability: capabilityName(parsed.action), referenceId };
      try {
        const call = authorize(ctx, capability, policy, referenceId);
        const args = parseArguments(capability, input.body, fields);
        const env = createRunEnv(call, options.ledger, options.targets, options.createRateLimit ?? CREATE_RATE_LIMIT);
        const payload = await capability.run(env, args);
        fields.sessionId = payload.sessionId;
        fields.outcome = "ok";
        return successResult(payload, capability.describe(payload));
      } catch (error) {
        const value = toErrorValue(error, referenceId, logger);
        fields.outcome = value.error;
        return errorResult(value);
      } finally {
        fields.durationMs = Math.round(performance.now() - started);
        logger.info("remote session capability", fields);
      }
    },
  };
}

function authorize(ctx: CapabilityContext, capability: Capability, policy: RemoteSessionPolicy, referenceId: string) {
  if (!ctx.memberId) throw new SessionFailure(sessionError("membership_required", "only active members of the organization can use remote sessions"));
  if (!ctx.scopes.includes(policy.scope)) {
    throw new SessionFailure(sessionError("insufficient_scope", `this token lacks the ${policy.scope} scope`));
  }
  if (capability.write && !ctx.scopes.includes(policy.writeScope)) {
    throw new SessionFailure(sessionError("insufficient_scope", `remoteSession.${capability.action} changes things: it needs the ${policy.writeScope} scope`));
  }
  return { organizationId: ctx.organizationId, memberId: ctx.memberId, referenceId };
}

/** Parses the body (a JSON string is read as JSON, as den-api does); sizes go to the log, never text. */
function parseArguments(capability: Capability, body: unknown, fields: Record<string, unknown>) {
  let value = body ?? {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new SessionFailure(sessionError("invalid_capability_arguments", "body is a string that is not JSON"));
    }
  }
  const parsed = capability.args.safeParse(value);
  if (!parsed.success) {
    const issues = toArgumentIssues(parsed.error);
    throw new SessionFailure(
      sessionError("invalid_capability_arguments", `invalid arguments: ${issues.slice(0, 3).map((i) => `${i.path || "body"}: ${i.message}`).join("; ")}`, {
        details: { issues },
      }),
    );
  }
  const args = parsed.data as Record<string, unknown>;
  const text = args.prompt ?? args.instructions;
  if (typeof text === "string") fields.promptChars = text.length;
  return args;
}

function toErrorValue(error: unknown, referenceId: string, logger: Logger): SessionError {
  if (SessionFailure.isInstance(error)) return { ...error.error, referenceId };
  logger.error("remote session capability failed unexpectedly", { referenceId, error: error instanceof Error ? error.name : "unknown" });
  return sessionError("internal_error", "the gateway hit an unexpected error; retry shortly", { referenceId, retryAfterMs: 1_000 });
}
