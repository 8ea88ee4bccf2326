// A type-level test, checked by `tsc` (npm test type-checks every package): the source is
// assignable to den-api's `CapabilitySource` exactly as den-api declares it. Below is a
// transcription of den-api's registry declarations (its capability registry module), with one
// change den-api makes to adopt this source: `respond` added to `RemoteSessionAction`.
// Every member is a function-typed property, so TypeScript checks parameters strictly.
import type { RemoteSessionSource } from "./create-remote-session-source.js";

type RemoteSessionAction = "create" | "send" | "read" | "stop" | "list" | "targets" | "respond"; // + respond: the one widening

type ParsedCapability =
  | { kind: "catalog"; name: string }
  | { kind: "native"; name: string; connectionId: string; toolName: string }
  | { kind: "externalMcp"; name: string; connectionId: string; toolName: string }
  | { kind: "marketplace"; name: string; configObjectId: string; pluginId: string }
  | { kind: "builtinSkill"; name: string }
  | { kind: "remoteSession"; name: string; action: RemoteSessionAction }
  | { kind: "admin"; name: string; toolName: string };

type CapabilitySourceKind = ParsedCapability["kind"];

interface CapabilityPrincipal {
  userId: string;
  organizationId: string;
  scopes: Set<string>;
  payload: Record<string, unknown>;
}

interface CapabilityRegistryContext {
  app: unknown;
  env: unknown;
  catalog: readonly unknown[];
  principal: CapabilityPrincipal;
  organizationId: string;
  member: { orgMembershipId: string; teamIds: string[] } | null;
  redirectUriBase: string;
  generatedArtifactViewsEnabled: boolean;
  externalMcpConnectionsEnabled: boolean;
  remoteSessionsEnabled: boolean;
  audit: { organizationId: string; userId: string; memberId: string | null } | null;
  resolvePlatformAdmin: () => Promise<boolean>;
  resolveNamespaceContext: () => Promise<unknown>;
}

interface CapabilitySearchContext extends CapabilityRegistryContext {
  sourceFilter: { api: boolean; admin: boolean; mcp: boolean; marketplace: boolean; skills: boolean };
  marketplaceObjectTypes?: string[];
  reportExternalCoverage: (hint?: unknown) => void;
}

interface CapabilityExecuteInput {
  name: string;
  schemaDigest?: string;
  reportExternalCoverage: (hint?: unknown) => void;
}

interface CapabilityMatch {
  name: string;
  method: string;
  path: string;
  score: number;
  summary: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: boolean;
  querySchema?: Record<string, unknown>;
  bodySchema?: Record<string, unknown>;
  argumentsSchema?: Record<string, unknown>;
  invocation?: { argumentsField: "body" };
  scriptPath?: string;
  kind?: string;
  mcpApp?: { resourceUri: string };
}

interface CapabilityToolResult {
  isError?: true;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

interface CapabilityLeaf {
  name: string;
  scriptPath: string;
}

interface CapabilitySource {
  kind: CapabilitySourceKind;
  parseName: (name: string) => ParsedCapability | null;
  search: (ctx: CapabilitySearchContext, query: string, limit: number) => Promise<CapabilityMatch[]>;
  enumerate: (ctx: CapabilityRegistryContext) => Promise<CapabilityLeaf[]> | { excluded: string };
  execute: (ctx: CapabilityRegistryContext, parsed: ParsedCapability, input: CapabilityExecuteInput) => Promise<CapabilityToolResult>;
}

/** Fails to compile when the source stops being registrable in den-api as it is. */
export const registerInDenApi = (source: RemoteSessionSource): CapabilitySource => source;
