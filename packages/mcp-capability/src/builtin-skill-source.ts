import type { SearchContext } from "./registry-context.js";
import { REMOTE_SESSIONS_SKILL_MD } from "./remote-sessions-skill.generated.js";
import { rankMatches, scoreMatch } from "./score-match.js";

/**
 * A built-in skill in den-api's shape (its `BuiltinSkillDefinition`): den-api serves each one as
 * `skill:<name>` from its `builtinSkill` source, so a den-api host appends
 * {@link REMOTE_SESSIONS_SKILL} to its built-in skills as it is.
 */
export interface BuiltinSkill {
  descriptor: {
    name: string;
    title: string;
    description: string;
    /** The capability name: `skill:<name>`. */
    capability: `skill:${string}`;
    /** `skill://<name>/SKILL.md`: the match's `path`, and the skill's URI in the MCP skills extension. */
    location: string;
  };
  /** The whole `SKILL.md`. */
  source: string;
  /** Words a search also finds it by (each +1). */
  searchExtraTokens: string;
}

/**
 * The remote-session skill: when to hand work to the cloud worker or a desktop, the create → read
 * (`next`) → send → respond → stop loop, the web link, each error's human step, and what never
 * to do. Its text is `skills/remote-sessions/SKILL.md` of this package, versioned with it.
 */
export const REMOTE_SESSIONS_SKILL: BuiltinSkill = {
  descriptor: {
    name: "remote-sessions",
    title: "Remote Sessions",
    description: "Hand work to your cloud worker (web chat) or to one of your desktops, follow it until it is done, answer what it asks, and stop it.",
    capability: "skill:remote-sessions",
    location: "skill://remote-sessions/SKILL.md",
  },
  source: REMOTE_SESSIONS_SKILL_MD,
  searchExtraTokens: "hand handoff delegate send run continue desktop desktops computer laptop cloud worker web chat remote session sessions",
};

/** A built-in skill's match, exactly as den-api's built-in skill source answers it. */
export interface SkillMatch {
  name: string;
  method: "SKILL";
  path: string;
  score: number;
  summary: string;
  pathParams: [];
  queryParams: [];
  hasBody: false;
  kind: "skill";
}

/** What executing a built-in skill answers, as den-api renders it: one text part, no `structuredContent`. */
export interface SkillToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: true;
}

/** den-api's `builtinSkill` capability source over `skills`. */
export interface BuiltinSkillSource {
  kind: "builtinSkill";
  /** `{ kind: "builtinSkill", name }` for any `skill:<…>` name (an unknown one executes to `unknown_capability`), else null. */
  parseName(name: string): { kind: "builtinSkill"; name: string } | null;
  /** Nothing unless `sourceFilter.skills`; an empty query matches nothing. */
  search(ctx: Pick<SearchContext, "sourceFilter">, query: string, limit: number): Promise<SkillMatch[]>;
  /** Skills stay out of Code Mode tool trees here (den-api builds its own leaves from the definitions). */
  enumerate(): Promise<[]>;
  /** `{ kind: "skill", name, description, provenance, content }` as pretty JSON in one text part. */
  execute(ctx: unknown, parsed: { name: string }, input: { name: string }): Promise<SkillToolResult>;
}

/**
 * den-api's built-in skill source (as den-api's registry has it: `skill:<…>` names, `method: "SKILL"`
 * matches, the skill's whole text on execute), for hosts that are not den-api: the reference
 * gateway serves it beside the remote-session source. In den-api, add the skill definitions to
 * its own built-in skills instead of this source.
 */
export function createBuiltinSkillSource(skills: readonly BuiltinSkill[] = [REMOTE_SESSIONS_SKILL]): BuiltinSkillSource {
  const byName = new Map(skills.map((skill) => [skill.descriptor.capability as string, skill]));
  return {
    kind: "builtinSkill",
    parseName: (name) => (name.startsWith("skill:") && name.length > "skill:".length ? { kind: "builtinSkill", name } : null),
    search: async (ctx, query, limit) => {
      if (!ctx.sourceFilter.skills) return [];
      const matches = skills.map((skill): SkillMatch => {
        const { name, title, description, capability, location } = skill.descriptor;
        const score = scoreMatch(query, { name: `${name} ${title}`, summary: description, keywords: skill.searchExtraTokens.split(/\s+/) });
        return {
          name: capability,
          method: "SKILL",
          path: location,
          score,
          summary: description,
          pathParams: [],
          queryParams: [],
          hasBody: false,
          kind: "skill",
        };
      });
      return rankMatches(matches, limit);
    },
    enumerate: async () => [],
    execute: async (_ctx, parsed, input) => {
      const skill = byName.get(parsed.name);
      if (!skill) {
        const payload = { error: "unknown_capability", message: `No capability named "${input.name}". Call search_capabilities to find a valid name.` };
        return { isError: true, content: [{ type: "text", text: JSON.stringify(payload) }] };
      }
      const { title, description } = skill.descriptor;
      const payload = { kind: "skill", name: title, description, provenance: "Built into the OpenWork remote-session gateway.", content: skill.source };
      return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }] };
    },
  };
}
