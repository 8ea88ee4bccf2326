import type { Queryable } from "@openwork/remote-session-core/internal";
import type { SessionMcp } from "@openwork/runner-protocol";
import type { RunnerIdentity, TaskRow } from "../store/task-row.js";

/** Whose engine a session's MCP entry is for: the session's owner, membership and depth in its spawn tree. */
export interface SessionMcpSubject {
  organizationId: string;
  userId: string;
  memberId: string;
  sessionId: string;
  depth: number;
}

/** Issues the MCP entry of the engine running a session (the gateway's URL and the session's own credential). */
export type IssueSessionMcp = (subject: SessionMcpSubject) => SessionMcp | Promise<SessionMcp>;

const TURNS: ReadonlySet<string> = new Set(["remote_session.create", "remote_session.send"]);

/**
 * The MCP entry for the engine of `task`'s turn, or nothing: no issuer, or not a turn (an answer
 * or a relayed read runs no agent). A fresh claim read the owner already; else one indexed read.
 */
export async function sessionMcpFor(
  sql: Queryable,
  issue: IssueSessionMcp | undefined,
  task: Pick<TaskRow, "kind" | "organization_id" | "member_id" | "session_id">,
  /** The owner a claim already read. */
  known?: { userId: string; depth: number },
) {
  if (!issue || !TURNS.has(task.kind)) return undefined;
  const owner = known ?? (await ownerOf(sql, task));
  if (!owner) return undefined;
  return issue({ organizationId: task.organization_id, userId: owner.userId, memberId: task.member_id, sessionId: task.session_id, depth: owner.depth });
}

async function ownerOf(sql: Queryable, task: Pick<TaskRow, "organization_id" | "session_id">): Promise<{ userId: string; depth: number } | undefined> {
  const [session] = await sql<{ user_id: string; spawn_depth: number }[]>`
    select user_id, spawn_depth from remote_session where organization_id = ${task.organization_id} and id = ${task.session_id}`;
  return session ? { userId: session.user_id, depth: session.spawn_depth } : undefined;
}

/** `sessionMcpFor` the turn `taskId` this runner holds (a heartbeat asking for a fresh entry); nothing for a task it does not hold. */
export async function sessionMcpForHeld(sql: Queryable, issue: IssueSessionMcp | undefined, runner: RunnerIdentity, taskId: string) {
  if (!issue) return undefined;
  const [task] = await sql<Pick<TaskRow, "kind" | "organization_id" | "member_id" | "session_id">[]>`
    select kind, organization_id, member_id, session_id from desktop_task
    where organization_id = ${runner.organizationId} and id = ${taskId} and member_id = ${runner.memberId} and claimed_by_runner_id = ${runner.runnerId}`;
  return task ? sessionMcpFor(sql, issue, task) : undefined;
}
