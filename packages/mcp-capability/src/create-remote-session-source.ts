import {
  createRemoteSessions,
  errorFacts,
  errorPayload,
  type Logger,
  newReferenceId,
  type RateLimit,
  type SessionError,
  sessionError,
  SessionFailure,
  silentLogger,
  type SpawnRules,
  type Target,
  type TargetCall,
} from "@openwork/remote-session-core";
import type { SessionLedger } from "@openwork/remote-session-core/internal";
import { CREATE_RATE_LIMIT, SEND_RATE_LIMIT, resolveSpawnRules, toArgumentIssues, findNul, storableJson } from "@openwork/remote-session-core/internal";
import { z } from "zod";
import { MAX_BODY_DEPTH, pathTooDeep } from "./body-depth.js";
import { buildCapabilities } from "./capabilities/all-capabilities.js";
import { createSummary } from "./capabilities/create.js";
import type { Capability } from "./capabilities/capability.js";
import { ACTIONS, type Action, capabilityName, type ParsedCapability, parseName } from "./parse-name.js";
import { DEFAULT_POLICY, type RemoteSessionPolicy } from "./policy.js";
import type { RegistryContext, SearchContext } from "./registry-context.js";
import { createRunEnv } from "./run-env.js";
import { rankMatches, scoreMatch } from "./score-match.js";
import { createTargetCatalog, type OfferedTarget } from "./target-catalog.js";
import { checkTargetDeclarations } from "./target-declarations.js";
import { fromOpenworkDialect } from "./openwork-dialect.js";
import { toolResult, type ToolResult } from "./to-tool-result.js";
import { createMemberSlots, type MemberSlots } from "./member-slots.js";
import { createNotifiedLookup, type NotificationLog } from "./notification-log.js";
import { RefusalLog } from "./refusal-log.js";
import { type BudgetRules, type BudgetScope, noBudgetRules } from "./budget-rules.js";
import { type Audit, auditEvent, auditIntent, beginAudit, endAudit } from "./audit.js";

/** A match in the shape den-api's capability registry ranks and returns. */
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

/** What execute receives: den-api's `execute_capability` arguments; remote sessions read only `body` (an object, or a JSON string). */
export interface ExecuteInput {
  name?: string;
  schemaDigest?: string;
  path?: unknown;
  query?: unknown;
  body?: unknown;
}

/** The capability source: den-api's `CapabilitySource` for the `remoteSession` slot. */
export interface RemoteSessionSource {
  kind: "remoteSession";
  /** `{ kind: "remoteSession", name, action }` for `remote-session:<action>` (and `remoteSession.<action>`), else null. */
  parseName(name: string): ParsedCapability | null;
  /** Nothing unless `sourceFilter.api`, `member` and `remoteSessionsEnabled` are all truthy; never rejects for a valid context. */
  search(ctx: SearchContext, query: string, limit: number): Promise<CapabilityMatch[]>;
  /** Remote sessions stay out of Code Mode script tool trees, as in OpenWork. */
  enumerate(ctx: RegistryContext): Promise<[]>;
  /**
   * Runs a capability. Every outcome is a result value (den-api's rendering); it never rejects.
   * `parsed` may be any kind den-api's registry parses (catalog, native, externalMcp, marketplace,
   * builtinSkill, remoteSession, admin): a kind or name not this source's answers `unknown_capability`.
   * `signal` ends the call's waiting (a read's `waitMs`) when its client goes away.
   */
  execute(ctx: RegistryContext, parsed: AnyParsedCapability, input: ExecuteInput, options?: ExecuteOptions): Promise<ToolResult>;
  /** Reads with `waitMs` waiting now in this process. */
  waitingReads(): number;
}

/** Any capability a registry parsed, of whatever source's kind: what den-api hands every source's `execute`. */
export interface AnyParsedCapability {
  kind: string;
  name: string;
}

/** How one execute runs: the host's request it serves. */
export interface ExecuteOptions {
  /** Aborted when the request's client disconnects (or cancels the call). */
  signal?: AbortSignal;
}

export interface RemoteSessionSourceOptions {
  /** The targets offered (`cloud`, `desktop`, …), handed in: this package imports none. */
  targets: readonly Target[];
  /** The target of a create that names none, when offered to the caller (den-api: `cloud`). Default: the first offered. */
  defaultTarget?: string;
  ledger: SessionLedger;
  policy?: Partial<RemoteSessionPolicy>;
  /** Creates per owner per window. Default 32 a minute. */
  createRateLimit?: RateLimit;
  /** Sends per owner per window. Default 120 a minute. */
  sendRateLimit?: RateLimit;
  /**
   * How long a session may wait on the human (a permission, a question) before its reads mark the
   * request `overdue` and point the caller at answering or stopping it. Default 15 minutes.
   */
  inputTimeoutMs?: number;
  /**
   * Reads with `waitMs` one member may have waiting at once in this process; past it a read that
   * would wait is refused with `rate_limited` (`retryAfterMs`). Default 16.
   */
  waitingReadsPerMember?: number;
  /**
   * The audit of every create, send, respond and stop (den-api audits remote-session actions as
   * service actions). A function is told each outcome after the fact (awaited; one that throws is
   * logged, never the caller's error). An `AuditLog` may also refuse: its `begin` runs before the
   * action, and when it throws the call answers `audit_unavailable` (retryable) with nothing done.
   */
  audit?: Audit;
  /** How long an `AuditLog`'s `begin` may take; past it the call is refused (`audit_unavailable`). Default 5 s (`DEFAULT_AUDIT_TIMEOUT_MS`). */
  auditTimeoutMs?: number;
  /**
   * The host's record of the notifications it sent members (webhook, email). When given, a read of
   * a session whose request waits on the human (a permission, a question) carries `notified:
   * [{ channel, at, kind? }]`: what went out since the request was asked. Without it reads carry no
   * `notified`. A log that fails or is slow is logged and the read answers without it.
   */
  notificationLog?: NotificationLog;
  /**
   * How far sessions may start sessions through their engines' session credentials: depth and
   * live sessions per spawner. Default `DEFAULT_SPAWN_RULES` (3 and 32, Zeron's numbers). Spawned
   * creates also count against `createRateLimit`, as every create of the member does.
   */
  spawnRules?: Partial<SpawnRules>;
  /**
   * The host's budgets for sessions a person starts, per member or organization: `default`
   * applies when a create names none, and a create asking past `ceiling` is refused. Sessions
   * an engine starts take theirs from the budgets above them. Default: none.
   */
  budgetRules?: (scope: BudgetScope) => BudgetRules | Promise<BudgetRules>;
  logger?: Logger;
}

/** Default of {@link RemoteSessionSourceOptions.waitingReadsPerMember}. */
export const DEFAULT_WAITING_READS_PER_MEMBER = 16;
const WAITING_RETRY_AFTER_MS = 1_000;

/** How long a request may wait on the human before reads call it overdue. */
export const DEFAULT_INPUT_TIMEOUT_MS = 15 * 60_000;

/** What the source's search and execute share, resolved once from its options. */
interface SourceParts {
  options: RemoteSessionSourceOptions;
  policy: RemoteSessionPolicy;
  logger: Logger;
  targetAliases: ReadonlyMap<string, string>;
  catalog: ReturnType<typeof createTargetCatalog>;
  sessions: ReturnType<typeof createRemoteSessions>;
  capabilities: ReturnType<typeof buildCapabilities>;
  schemas: ReadonlyMap<Action, Record<string, unknown>>;
  notified: ReturnType<typeof createNotifiedLookup>;
  spawnRules: SpawnRules;
  waiting: MemberSlots;
  refusals: RefusalLog;
}

/**
 * Creates the remote-session capability source: search and execute for create, send, read,
 * list, stop and targets, in den-api's registry contract. Errors come back as `isError` values
 * with a `referenceId`, never thrown.
 */
export function createRemoteSessionSource(options: RemoteSessionSourceOptions): RemoteSessionSource {
  const parts = sourcePartsOf(options);
  return {
    kind: "remoteSession",
    parseName,
    enumerate: async () => [],
    waitingReads: parts.waiting.count,
    search: async (ctx, query, limit) => {
      // A rejected search fails den-api's whole search_capabilities: a target's failure hides us instead.
      try {
        return await matches(parts, ctx, query, limit);
      } catch (error) {
        parts.logger.error("remote session search failed", { error: errorFacts(error) });
        return [];
      }
    },
    execute: (ctx, parsed, input, execution = {}) => executeCapability(parts, ctx, parsed, input, execution),
  };
}

function sourcePartsOf(options: RemoteSessionSourceOptions): SourceParts {
  const logger = options.logger ?? silentLogger;
  checkTargetDeclarations(options.targets);
  const capabilities = buildCapabilities(options.targets);
  return {
    options,
    policy: { ...DEFAULT_POLICY, ...options.policy },
    logger,
    targetAliases: new Map(options.targets.flatMap((t) => (t.aliases ?? []).map((alias) => [alias, t.name] as const))),
    catalog: createTargetCatalog(options.targets, options.defaultTarget),
    sessions: createRemoteSessions(options.ledger, logger),
    capabilities,
    schemas: new Map(ACTIONS.map((action) => [action, z.toJSONSchema(capabilities[action].args, { io: "input" }) as Record<string, unknown>])),
    notified: createNotifiedLookup(options.notificationLog, logger),
    spawnRules: resolveSpawnRules(options.spawnRules),
    waiting: createMemberSlots(options.waitingReadsPerMember ?? DEFAULT_WAITING_READS_PER_MEMBER),
    refusals: new RefusalLog(),
  };
}

const gated = (policy: RemoteSessionPolicy, ctx: RegistryContext) => policy.gateScope !== undefined && !ctx.principal.scopes.has(policy.gateScope);

/** Create's schema as this caller may use it: the targets offered to them, and the real default. */
function schemaFor(parts: SourceParts, action: Action, offered: readonly OfferedTarget[]): Record<string, unknown> {
  const schema = parts.schemas.get(action)!;
  if (action !== "create") return schema;
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const names = offered.map((o) => o.target.name);
  const fallback = parts.catalog.defaultOf(offered);
  return { ...schema, properties: { ...properties, target: { ...properties.target, enum: names, ...(fallback ? { default: fallback } : {}) } } };
}

async function matches(parts: SourceParts, ctx: SearchContext, query: string, limit: number): Promise<CapabilityMatch[]> {
  if (!ctx.sourceFilter.api || !ctx.member || !ctx.remoteSessionsEnabled || gated(parts.policy, ctx)) return [];
  const offered = await parts.catalog.offered(targetCall(ctx, ctx.member, newReferenceId()));
  const all = ACTIONS.map((action) => {
    const capability = parts.capabilities[action];
    // Create's summary names only the targets this caller is offered.
    const summary = action === "create" ? createSummary(offered.map((o) => o.target)) : capability.summary;
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
      argumentsSchema: schemaFor(parts, action, offered),
      invocation: { argumentsField: "body" as const },
    };
  });
  return rankMatches(all, limit);
}

/** One capability call, as a result value whatever happens; logged, and audited when it writes. */
async function executeCapability(
  parts: SourceParts,
  ctx: RegistryContext,
  parsed: AnyParsedCapability,
  input: ExecuteInput,
  execution: ExecuteOptions,
): Promise<ToolResult> {
  const { options, logger } = parts;
  const referenceId = newReferenceId();
  const started = performance.now();
  // Only this source's kind, and a name it parses itself: den-api hands every kind to every source's type.
  const own = parsed.kind === "remoteSession" ? parseName(parsed.name) : null;
  const fields: Record<string, unknown> = { capability: own ? capabilityName(own.action) : "unknown", referenceId };
  // Body members set aside (OpenWork's names with no use here, misspellings): named in the result.
  const ignored: string[] = [];
  let leave = () => {};
  let begun = false;
  try {
    if (!own || (!ctx.remoteSessionsEnabled && !KEPT_WHEN_DISABLED.has(own.action))) {
      throw new SessionFailure(sessionError("unknown_capability", `no capability named ${parsed.name}; call search_capabilities to find a valid name`));
    }
    const capability = parts.capabilities[own.action];
    const call = { ...authorize(ctx, capability, parts.policy, referenceId), ...(execution.signal ? { signal: execution.signal } : {}) };
    const known = new Set(Object.keys((parts.schemas.get(own.action)!.properties ?? {}) as object));
    const dialect = fromOpenworkDialect(own.action, readBody(input.body), known, parts.targetAliases);
    ignored.push(...dialect.ignored);
    const args = parseArguments(capability, dialect.body, fields);
    if (typeof args.sessionId === "string") fields.sessionId = args.sessionId;
    if (typeof args.waitMs === "number" && args.waitMs > 0)
      leave = enterWaiting(parts.waiting, call, options.waitingReadsPerMember ?? DEFAULT_WAITING_READS_PER_MEMBER);
    const env = createRunEnv(call, ignored, {
      ledger: options.ledger,
      sessions: parts.sessions,
      catalog: parts.catalog,
      createRateLimit: options.createRateLimit ?? CREATE_RATE_LIMIT,
      sendRateLimit: options.sendRateLimit ?? SEND_RATE_LIMIT,
      inputTimeoutMs: options.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS,
      notified: parts.notified,
      spawner: ctx.remoteSession?.sessionId ?? null,
      spawnRules: parts.spawnRules,
      budgetRules: options.budgetRules ?? noBudgetRules,
    });
    if (capability.write) await beginAudit(options.audit, auditIntent(ctx, own.action, fields), logger, options.auditTimeoutMs);
    begun = true;
    const payload = await capability.run(env, args);
    fields.sessionId = payload.sessionId;
    fields.outcome = "ok";
    return toolResult(withIgnored(payload, ignored));
  } catch (error) {
    const value = toErrorValue(error, referenceId, logger);
    fields.outcome = value.error;
    // The cause, for whoever follows the referenceId: error messages name ids and codes, never prompts.
    fields.cause = value.message.slice(0, 300);
    return toolResult(withIgnored(errorPayload(value), ignored), true);
  } finally {
    leave();
    fields.durationMs = Math.round(performance.now() - started);
    logCall(logger, parts.refusals, ctx, fields);
    // A log that refuses pairs each outcome with its intent: a call that never began (refused
    // before it could run, or by the log itself) ends nothing. A plain hook hears every outcome.
    const audit = options.audit;
    if (own && parts.capabilities[own.action].write && audit && (typeof audit === "function" || begun))
      await endAudit(audit, auditEvent(ctx, own.action, fields), logger);
  }
}

/**
 * The call's log line. A refusal a member can repeat in a loop (`rate_limited`) is sampled: one
 * line per member, capability and window, naming how many were left out before it.
 */
function logCall(logger: Logger, refusals: RefusalLog, ctx: RegistryContext, fields: Record<string, unknown>): void {
  if (fields.outcome !== "rate_limited") {
    logger.info("remote session capability", fields);
    return;
  }
  const taken = refusals.take(`${ctx.organizationId}\u0000${ctx.principal.userId}\u0000${String(fields.capability)}`);
  if (taken) logger.info("remote session capability", { ...fields, ...(taken.leftOut > 0 ? { refusalsLeftOut: taken.leftOut } : {}) });
}

/** The intent of a call about to run (its session, when it names one). */
/**
 * What an organization whose remote sessions were switched off keeps, as den-api's registry does:
 * reading, listing and stopping the sessions it already has, so a rollout revert never strands
 * running work. Starting or driving new work (create, send, respond) and `targets` disappear.
 */
const KEPT_WHEN_DISABLED: ReadonlySet<Action> = new Set(["read", "list", "stop"]);

const targetCall = (ctx: RegistryContext, member: { orgMembershipId: string }, referenceId: string): TargetCall => ({
  organizationId: ctx.organizationId,
  userId: ctx.principal.userId,
  memberId: member.orgMembershipId,
  referenceId,
});

function authorize(ctx: RegistryContext, capability: Capability, policy: RemoteSessionPolicy, referenceId: string): TargetCall {
  if (!ctx.member) throw new SessionFailure(sessionError("membership_required", "only active members of the organization can use remote sessions"));
  if (policy.gateScope !== undefined && !ctx.principal.scopes.has(policy.gateScope)) {
    throw new SessionFailure(sessionError("insufficient_mcp_scope", `this token lacks the ${policy.gateScope} scope`));
  }
  if (capability.write && !ctx.principal.scopes.has(policy.writeScope)) {
    throw new SessionFailure(
      sessionError("insufficient_mcp_scope", `${capabilityName(capability.action)} changes things: it needs the ${policy.writeScope} scope`),
    );
  }
  return targetCall(ctx, ctx.member, referenceId);
}

/**
 * Reads the body as den-api does: a string whose trimmed form starts with `{` or `[` is parsed as
 * JSON (a parse failure leaves the string, which then fails validation); absent or null is `{}`.
 */
function readBody(body: unknown): unknown {
  const value = body ?? {};
  if (typeof value !== "string" || !/^[[{]/.test(value.trim())) return value;
  try {
    return JSON.parse(value);
  } catch {
    // Left as the string: validation names it.
    return value;
  }
}

/** Counts a read that will wait, or refuses it past the member's limit. */
function enterWaiting(waiting: MemberSlots, call: TargetCall, limit: number): () => void {
  const leave = waiting.enter(`${call.organizationId}\u0000${call.memberId}`);
  if (leave) return leave;
  throw new SessionFailure(
    sessionError("rate_limited", `at most ${limit} reads with waitMs may wait at once per member; retry after the others answer, or read without waitMs`, {
      retryAfterMs: WAITING_RETRY_AFTER_MS,
    }),
  );
}

/** The payload, naming the body members that were set aside, when there were any. */
const withIgnored = (payload: Record<string, unknown>, ignored: readonly string[]) =>
  ignored.length > 0 ? { ...payload, ignored: [...new Set(ignored)] } : payload;

/** Validates the arguments; sizes go to the log, never text. */
function parseArguments(capability: Capability, value: unknown, fields: Record<string, unknown>) {
  // Before anything that recurses over the body (the NUL check, zod): a body nested thousands
  // deep is refused in words instead of exhausting the stack.
  const deep = pathTooDeep(value);
  if (deep !== null) {
    const message = `nests deeper than ${MAX_BODY_DEPTH} levels`;
    throw new SessionFailure(sessionError("invalid_capability_arguments", `body ${message}`, { issues: [{ path: deep.slice(0, 200), message }] }));
  }
  // NUL cannot be stored and means nothing in an argument: refused before any side effect.
  const nul = findNul(value);
  if (nul !== null) {
    throw new SessionFailure(
      sessionError("invalid_capability_arguments", `${nul || "body"} contains a NUL character`, {
        issues: [{ path: nul, message: "contains a NUL character" }],
      }),
    );
  }
  const parsed = capability.args.safeParse(storableJson(value));
  if (!parsed.success) {
    const issues = toArgumentIssues(parsed.error);
    const summary = issues
      .slice(0, 3)
      .map((i) => `${i.path || "body"}: ${i.message}`)
      .join("; ");
    throw new SessionFailure(sessionError("invalid_capability_arguments", `invalid arguments: ${summary}`, { issues }));
  }
  const args = parsed.data as Record<string, unknown>;
  const text = args.prompt ?? args.instructions;
  if (typeof text === "string") fields.promptChars = text.length;
  return args;
}

function toErrorValue(error: unknown, referenceId: string, logger: Logger): SessionError {
  if (SessionFailure.isInstance(error)) return { ...error.error, referenceId };
  logger.error("remote session capability failed unexpectedly", { referenceId, error: errorFacts(error) });
  return sessionError("internal_error", "the gateway hit an unexpected error; retry shortly", { referenceId, retryAfterMs: 1_000 });
}
