import { z } from "zod";

/** The kinds of remote-session work every gateway of this protocol offers. */
export const WORK_KINDS = ["remote_session.create", "remote_session.send", "remote_session.respond"] as const;

export type WorkKind = (typeof WORK_KINDS)[number];

const BUILT_IN: ReadonlySet<string> = new Set(WORK_KINDS);

/** Whether a kind name is one of the remote-session kinds (not one a host registered). */
export const isBuiltInKind = (kind: string): kind is WorkKind => BUILT_IN.has(kind);

/**
 * The name of a kind of work: dotted lowercase words, the first naming its owner
 * (`remote_session.create`, `automation.run`). Open: a host registers kinds of its own beside the
 * remote-session ones, and a runner names the kinds it has handlers for.
 */
export const WorkKindNameSchema = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, "dotted lowercase words, e.g. automation.run");

/** The most kinds one claim may name. */
export const MAX_CLAIM_KINDS = 16;

/** The kinds a claim names: the remote-session ones and (protocol 4) those of the host. */
export const ClaimKindsSchema = z.array(WorkKindNameSchema).min(1).max(MAX_CLAIM_KINDS);
