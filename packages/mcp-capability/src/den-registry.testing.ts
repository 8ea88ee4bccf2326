import type { CapabilityMatch, ExecuteInput, RemoteSessionSource } from "./create-remote-session-source.js";
import type { RegistryContext, SearchContext } from "./registry-context.js";
import type { ToolResult } from "./to-tool-result.js";

/**
 * A double of den-api's capability registry, written from its contract (the order in which den-api consults its sources): the
 * catalog source first, claiming every name without a colon (as den-api's OpenAPI catalog does),
 * then the remote-session slot. Execute goes to the first source whose `parseName` claims the
 * name, with no fall-through; search concatenates every source and sorts by score, then name.
 */
export function createDenRegistry(remoteSession: RemoteSessionSource, catalogOperations: readonly string[] = ["listMembers", "getOrganization"]) {
  const catalog = {
    kind: "catalog" as const,
    parseName: (name: string) => (name.includes(":") ? null : { kind: "catalog" as const, name }),
    search: async (ctx: SearchContext, query: string): Promise<Pick<CapabilityMatch, "name" | "score">[]> =>
      ctx.sourceFilter.api ? catalogOperations.filter((op) => op.toLowerCase().includes(query.toLowerCase())).map((name) => ({ name, score: 4 })) : [],
    execute: async (_ctx: RegistryContext, parsed: { name: string }): Promise<ToolResult> => {
      const payload = { error: "unknown_capability", message: `no API operation ${parsed.name}` };
      return { isError: true, content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
    },
  };
  const sources = [catalog, remoteSession] as const;
  return {
    search: async (ctx: SearchContext, query: string, limit: number) => {
      const all = (await Promise.all(sources.map((s) => s.search(ctx, query, limit)))).flat();
      return all.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name)).slice(0, limit);
    },
    execute: async (ctx: RegistryContext, input: ExecuteInput & { name: string }): Promise<ToolResult> => {
      for (const source of sources) {
        const parsed = source.parseName(input.name);
        if (parsed?.kind === "catalog") return catalog.execute(ctx, parsed);
        if (parsed) return remoteSession.execute(ctx, parsed, input);
      }
      const payload = { error: "unknown_capability" };
      return { isError: true, content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
    },
  };
}
