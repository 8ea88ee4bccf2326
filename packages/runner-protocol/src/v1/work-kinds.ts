/** Kinds of work a runner can be offered. */
export const WORK_KINDS = ["remote_session.create", "remote_session.send", "remote_session.respond"] as const;

export type WorkKind = (typeof WORK_KINDS)[number];
