import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { type BudgetRules, remoteSessionContext, type SearchContext } from "@openwork/mcp-capability";
import { BudgetSchema, newReferenceId, type TargetCall } from "@openwork/remote-session-core";
import { z } from "zod";

/**
 * A member the reference gateway knows, with two separate credentials: an MCP token for
 * `/mcp/agent`, and a session token for the member routes (runner token mint, presence). Neither
 * works in the other's place, as in OpenWork.
 */
export const DevMemberSchema = z.strictObject({
  name: z.string().min(1).max(120),
  organizationId: z.string().min(1).max(160),
  /** The user id sessions are owned by (as OpenWork keys them). Configs written before it existed use `user_<memberId>`. */
  userId: z.string().min(1).max(160).optional(),
  /** The organization membership id (desktops are registered under it). */
  memberId: z.string().min(1).max(160),
  /** False for someone whose membership was removed: their MCP token still verifies, but they are no active member. Default true. */
  active: z.boolean().optional(),
  mcpToken: z.string().min(16).max(200),
  sessionToken: z.string().min(16).max(200),
  scopes: z.array(z.string().max(80)).max(20),
});
export type DevMember = z.infer<typeof DevMemberSchema>;

const BudgetRulesSchema = z.strictObject({ default: BudgetSchema.optional(), ceiling: BudgetSchema.optional() });

export const DevConfigSchema = z.strictObject({
  members: z.array(DevMemberSchema).min(1),
  /** Organizations with cloud sessions on (`capabilities.cloud`). */
  cloudOrganizations: z.array(z.string()).default([]),
  /** Signs runner tokens; kept so runners survive a gateway restart. */
  runnerTokenSecret: z.string().min(32),
  /**
   * Budgets of the sessions members start (a `default`, a `ceiling`), by organization id and by
   * membership id; a member's own rules stand before their organization's.
   */
  budgets: z
    .strictObject({
      organizations: z.record(z.string(), BudgetRulesSchema).default({}),
      members: z.record(z.string(), BudgetRulesSchema).default({}),
    })
    .optional(),
});
export type DevConfig = z.infer<typeof DevConfigSchema>;

/** The budget rules of a member under `config` (theirs, else their organization's, else none). */
export const budgetRulesOf =
  (config: Pick<DevConfig, "budgets">) =>
  (scope: { organizationId: string; memberId: string }): BudgetRules =>
    config.budgets?.members[scope.memberId] ?? config.budgets?.organizations[scope.organizationId] ?? {};

/** The user id of a member: its own, or one derived from the membership id for older configs. */
export const userIdOf = (member: DevMember): string => member.userId ?? `user_${member.memberId}`;

/** den-api's registry context for a member (what the MCP endpoint builds from the member's token). */
export const memberContext = (member: DevMember): SearchContext =>
  remoteSessionContext({
    organizationId: member.organizationId,
    userId: userIdOf(member),
    orgMembershipId: member.active === false ? null : member.memberId,
    scopes: member.scopes,
  });

/** A Target call for a member, as the capability makes one. */
export const memberCall = (member: DevMember): TargetCall => ({
  organizationId: member.organizationId,
  userId: userIdOf(member),
  memberId: member.memberId,
  referenceId: newReferenceId(),
});

const token = (prefix: string) => `${prefix}_${randomBytes(18).toString("base64url")}`;

/** Reads the dev config, or writes a new one (one member of one organization, cloud on). */
export async function loadDevConfig(path: string): Promise<DevConfig> {
  try {
    return DevConfigSchema.parse(JSON.parse(await readFile(path, "utf8")));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const config: DevConfig = {
    members: [
      {
        name: "Dev member",
        organizationId: "org_dev",
        userId: "user_dev",
        memberId: "mem_dev",
        mcpToken: token("mcp"),
        sessionToken: token("session"),
        scopes: ["mcp:read", "mcp:write"],
      },
    ],
    cloudOrganizations: ["org_dev"],
    runnerTokenSecret: randomBytes(32).toString("base64url"),
  };
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return config;
}

/** A member with predictable tokens, for tests and benchmarks (never for a real deployment). */
export function fixedDevMember(name: string, scopes: string[] = ["mcp:read", "mcp:write"]): DevMember {
  return {
    name,
    organizationId: `org_${name}`,
    userId: `user_${name}`,
    memberId: `mem_${name}`,
    mcpToken: `mcp_${name}_token_0123456789`,
    sessionToken: `session_${name}_token_0123456789`,
    scopes,
  };
}
