import { sessionError } from "@openwork/remote-session-core";
import { z } from "zod";
import { type BuiltinSkillSource, createBuiltinSkillSource, type SkillToolResult } from "./builtin-skill-source.js";
import type { RemoteSessionSource } from "./create-remote-session-source.js";
import { ALL_SOURCES, type SearchContext, type SourceFilter, remoteSessionContext } from "./registry-context.js";
import { compareMatches } from "./score-match.js";
import { fitMatches } from "./fit-matches.js";
import { errorResult, toolResult, type ToolResult } from "./to-tool-result.js";

/** The part of either SDK generation's `AuthInfo` the adapters read. */
export interface AuthInfoLike {
  scopes: string[];
  extra?: Record<string, unknown>;
}

/** Turns the transport's verified AuthInfo into den-api's context; null refuses the call. */
export type ContextOf = (authInfo: AuthInfoLike | undefined) => SearchContext | null;

/** What both adapters take. */
export interface RemoteSessionToolsOptions {
  source: RemoteSessionSource;
  /**
   * The caller, from the verified AuthInfo only. Default: `authInfo.scopes` and
   * `authInfo.extra.{organizationId, userId, memberId, remoteSessionsEnabled, remoteSessionId}`
   * (a missing `memberId` means "not an active member"; `remoteSessionsEnabled` defaults to
   * true; `remoteSessionId` is set by the host only for a verified session credential).
   */
  contextOf?: ContextOf;
  /** Register the card resource and link it on `execute_capability`. Default true. */
  card?: boolean;
  /**
   * The built-in skill source served beside `source`, as den-api's registry serves its
   * `builtinSkill` slot: found by `search_capabilities`, run as `skill:<name>`. Default: the
   * remote-sessions skill; `false`: none.
   */
  skills?: BuiltinSkillSource | false;
}

/** The default {@link ContextOf}. */
export function contextFromAuthInfo(authInfo: AuthInfoLike | undefined): SearchContext | null {
  const extra = authInfo?.extra ?? {};
  const { organizationId, userId, memberId, remoteSessionsEnabled, remoteSessionId } = extra;
  if (!authInfo || typeof organizationId !== "string" || typeof userId !== "string") return null;
  return remoteSessionContext({
    organizationId,
    userId,
    orgMembershipId: typeof memberId === "string" ? memberId : null,
    scopes: authInfo.scopes,
    remoteSessionsEnabled: remoteSessionsEnabled !== false,
    ...(typeof remoteSessionId === "string" ? { callerSessionId: remoteSessionId } : {}),
  });
}

const SOURCE_TYPES = ["all", "api", "admin", "mcp", "marketplace", "skills"] as const;
/** den-api's `type` argument → the source filter (`skills` also searches the marketplace). */
const filterOf = (type: (typeof SOURCE_TYPES)[number]): SourceFilter =>
  type === "all"
    ? ALL_SOURCES
    : {
        api: type === "api",
        admin: type === "admin",
        mcp: type === "mcp",
        marketplace: type === "marketplace" || type === "skills",
        skills: type === "skills",
      };

/** `search_capabilities`: its schema, annotations and description, the same for both SDK generations. */
export const SEARCH_TOOL = {
  name: "search_capabilities",
  description:
    "Search the capabilities available to you, e.g. remote sessions on your cloud worker or desktops. Each match gives its name and the JSON Schema of its arguments; run one with execute_capability.",
  inputSchema: z.strictObject({
    query: z.string().min(1).max(500).describe("Words describing what you want to do, e.g. 'remote session'."),
    limit: z.int().min(1).max(20).default(10).describe("At most this many matches (default 10: every remote-session action fits)."),
    type: z.enum(SOURCE_TYPES).default("all").describe("Which kind of capabilities to search."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
} as const;

// execute_capability's own arguments (den-api's ExecuteInput); anything else is a mistake to name.
const EXECUTE_KEYS = new Set(["name", "body", "schemaDigest", "path", "query"]);

/**
 * `execute_capability`. The schema is loose on purpose: an unknown top-level key (flat arguments,
 * or `arguments`) must reach the handler to be refused with an error naming `body`, never be
 * stripped silently.
 */
export const EXECUTE_TOOL = {
  name: "execute_capability",
  description: "Run a capability by its exact name from search_capabilities, with its arguments in body.",
  inputSchema: z.looseObject({
    name: z.string().min(1).max(200).describe("The capability's exact name from search_capabilities, e.g. remote-session:create."),
    body: z
      .union([z.record(z.string(), z.unknown()), z.string().max(500_000)])
      .nullable()
      .optional()
      .describe("The capability's arguments, as its argumentsSchema describes: a JSON object, or the same object as a JSON string."),
    schemaDigest: z.string().max(200).optional().describe("Ignored by remote sessions."),
    path: z.unknown().optional().describe("Ignored by remote sessions: they take only body."),
    query: z.unknown().optional().describe("Ignored by remote sessions: they take only body."),
  }),
  // Not read-only (create, send and stop change things), but not destructive either: nothing a
  // capability does deletes data, and clients such as Codex put every call of a destructive tool
  // behind an approval, reads included.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
} as const;

/** The two tools' handlers over a source, independent of the SDK that carries them. */
export function createToolHandlers(options: RemoteSessionToolsOptions) {
  const contextOf = options.contextOf ?? contextFromAuthInfo;
  const skills = options.skills === false ? null : (options.skills ?? createBuiltinSkillSource());
  return {
    // As den-api's registry: every source's matches, by score then name, cut to the limit.
    search: async (args: z.output<typeof SEARCH_TOOL.inputSchema>, authInfo: AuthInfoLike | undefined): Promise<ToolResult> => {
      const ctx = contextOf(authInfo);
      if (!ctx) return toolResult({ matches: [] });
      const searchContext = { ...ctx, sourceFilter: filterOf(args.type) };
      const found = await Promise.all([
        options.source.search(searchContext, args.query, args.limit),
        skills?.search(searchContext, args.query, args.limit) ?? [],
      ]);
      const matches = found.flat().sort(compareMatches).slice(0, args.limit);
      return toolResult(fitMatches(matches));
    },
    // `signal`: the call's client went away (or cancelled it): a waiting read stops waiting.
    execute: async (
      args: z.output<typeof EXECUTE_TOOL.inputSchema>,
      authInfo: AuthInfoLike | undefined,
      signal?: AbortSignal,
    ): Promise<ToolResult | SkillToolResult> => {
      const unknown = Object.keys(args).filter((key) => !EXECUTE_KEYS.has(key));
      if (unknown.length > 0) {
        const message = "not an argument of execute_capability: put the capability's arguments in body";
        return errorResult(
          sessionError("invalid_capability_arguments", `unknown argument ${unknown.join(", ")}: put the capability's arguments in body`, {
            issues: unknown.map((path) => ({ path, message })),
          }),
        );
      }
      const ctx = contextOf(authInfo);
      if (!ctx) return errorResult(sessionError("membership_required", "this token does not name an organization member"));
      const skill = skills?.parseName(args.name);
      if (skills && skill) return skills.execute(ctx, skill, args);
      const parsed = options.source.parseName(args.name);
      if (!parsed) return errorResult(sessionError("unknown_capability", `no capability named ${args.name}; call search_capabilities to find a valid name`));
      return options.source.execute(ctx, parsed, args, signal ? { signal } : {});
    },
  };
}
