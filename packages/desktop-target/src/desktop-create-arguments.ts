import { WorkspaceIdSchema } from "@openwork/remote-session-core/internal";
import { LIMITS } from "@openwork/runner-protocol";
import { EngineIdSchema } from "@openwork/runner-protocol/internal";
import { z } from "zod";

/** The furthest a store-and-forward deadline may be: a week. */
const MAX_DELIVER_BY_MS = 7 * 24 * 60 * 60_000;

/** The create arguments only desktops take. */
export const DESKTOP_CREATE_ARGUMENTS = {
  // A computerId or a name: as long as a runner id at most.
  runner: z.string().min(1).max(LIMITS.runnerId).optional().describe("Desktop: a computerId or a desktop name, from remote-session:targets."),
  deliverBy: z.iso
    .datetime({ offset: true })
    .refine((at) => Date.parse(at) <= Date.now() + MAX_DELIVER_BY_MS, "at most 7 days ahead")
    .optional()
    .describe("Desktop: wait for a desktop until this ISO time (at most 7 days ahead) instead of failing when none is online."),
  workspaceId: WorkspaceIdSchema.optional().describe("The workspace to run in (cloud: the worker's; desktop: the desktop's)."),
  // An id (as long as a runner-minted id may be) or a name (with spaces).
  workspace: z
    .string()
    .trim()
    .min(1)
    .max(LIMITS.localId)
    .optional()
    .describe(
      "Desktop: a workspace (project) by id or name, from remote-session:targets, instead of a desktop: the session goes to the desktop that has it (online first).",
    ),
  engine: EngineIdSchema.optional().describe("Desktop: the engine to run on (from remote-session:targets); the workspace the session runs in must use it."),
  worktree: z
    .boolean()
    .optional()
    .describe("Desktop: run the session in a fresh git worktree of the workspace, named after the session, left for you afterwards."),
};
export const DesktopCreateSchema = z.object(DESKTOP_CREATE_ARGUMENTS);
