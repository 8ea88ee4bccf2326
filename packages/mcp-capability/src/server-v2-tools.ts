import type { McpServer } from "@modelcontextprotocol/server";
import { type Skill, type SkillSource, SkillsExtension, skillEntry } from "@modelcontextprotocol/server/ext/skills";
import { CARD_TOOL_META } from "@openwork/mcp-app-card";
import { registerCardResource } from "@openwork/mcp-app-card/server-v2";
import { type BuiltinSkill, REMOTE_SESSIONS_SKILL } from "./builtin-skill-source.js";
import { type AskedCodec, type Execute, executeAsking } from "./elicit-answers.js";
import { executeAskingLegacy, type LegacyAsking } from "./elicit-legacy.js";
import { createToolHandlers, EXECUTE_TOOL, type RemoteSessionToolsOptions as ToolsOptions, SEARCH_TOOL } from "./mcp-tools.js";

/** What `registerRemoteSessionTools` takes on a server 2.x. */
export interface RemoteSessionToolsOptions extends ToolsOptions {
  /**
   * Asks the caller's human directly when a waiting read meets a question (MCP 2026-07-28
   * elicitation): the codec the server's `requestState.verify` runs too. Only for a server that
   * answers the 2026 era; `createRemoteSessionEndpoint` sets both from its `elicitation` option.
   */
  asking?: AskedCodec;
  /**
   * The same for a server answering a 2025-era request whose client declared elicitation at
   * `initialize`: its stream, the codec, this process's waiting reads. Set per request by
   * `createRemoteSessionEndpoint`.
   */
  legacyAsking?: LegacyAsking;
}

/**
 * Puts den-api's two tools on an `@modelcontextprotocol/server` 2.x McpServer:
 * `search_capabilities` and `execute_capability`, with the card resource linked on the latter
 * through the same `_meta` keys ext-apps 2.x's `registerAppTool` writes. Unless `skills: false`,
 * the remote-sessions skill is also served through the MCP skills extension (SEP-2640) to the
 * clients that support it (others see one more server capability and nothing else).
 */
export function registerRemoteSessionTools(server: McpServer, options: RemoteSessionToolsOptions): void {
  const handlers = createToolHandlers(options);
  const { name: searchName, ...search } = SEARCH_TOOL;
  server.registerTool(searchName, search, (args, ctx) => handlers.search(args, ctx.http?.authInfo));

  const { name: executeName, ...execute } = EXECUTE_TOOL;
  const withCard = options.card !== false;
  if (withCard) registerCardResource(server);
  const { asking, legacyAsking } = options;
  server.registerTool(executeName, { ...execute, ...(withCard ? { _meta: CARD_TOOL_META } : {}) }, (args, ctx) => {
    const run: Execute = (call, signal) => handlers.execute(call, ctx.http?.authInfo, callSignal(ctx.mcpReq.signal, ctx.http?.req?.signal, signal));
    if (asking) return executeAsking(asking, run, args, ctx);
    return legacyAsking ? executeAskingLegacy(legacyAsking, run, args, ctx) : run(args);
  });
  if (options.skills !== false) REMOTE_SESSIONS_EXTENSION.attach(server);
}

/**
 * Aborted when the call is cancelled or its HTTP request's client disconnects (the transport
 * answering with JSON does not abort the call itself when the client goes away), or another aborts.
 */
function callSignal(call: AbortSignal, ...others: (AbortSignal | undefined)[]): AbortSignal {
  const more = others.filter((signal) => signal !== undefined);
  return more.length > 0 ? AbortSignal.any([call, ...more]) : call;
}

/**
 * The MCP skills extension serving built-in skills: `skills/list`, `skills/get` and their
 * `SKILL.md` as a `skill://` resource, with the digests clients verify. One instance serves every
 * server it is attached to.
 */
export function builtinSkillsExtension(skills: readonly BuiltinSkill[]): SkillsExtension {
  let entries: Promise<Skill[]> | undefined;
  const listed = () => (entries ??= Promise.all(skills.map((skill) => skillEntry(skill.descriptor.name, { "SKILL.md": skill.source }))));
  const find = async (uri: string) => {
    const all = await listed();
    const index = all.findIndex((entry) => entry.uri === uri);
    return index < 0 ? undefined : { entry: all[index]!, skill: skills[index]! };
  };
  const source: SkillSource = {
    list: async () => ({ skills: await listed() }),
    get: async (uri) => (await find(uri))?.entry,
    read: async (uri) => {
      const found = await find(uri);
      return found ? { text: found.skill.source, mimeType: "text/markdown" } : undefined;
    },
  };
  return new SkillsExtension({ source });
}

const REMOTE_SESSIONS_EXTENSION = builtinSkillsExtension([REMOTE_SESSIONS_SKILL]);
