import type { Queryable } from "@openwork/remote-session-core";
import { SESSION_CHANNEL } from "../wake/channels.js";

/** Tells every gateway process that a session changed (delivered at commit). Id only. */
export async function notifySession(sql: Queryable, sessionId: string): Promise<void> {
  await sql`select pg_notify(${SESSION_CHANNEL}, ${sessionId})`;
}
