import type { TaskKind } from "../../store/task-row.js";

/**
 * What an OpenWork desktop needs for each kind of task, in OpenWork's vocabulary: a create is its
 * command (`remote_session_v1`); follow-ups, reads and stops are requests to the desktop that
 * holds the session (`remote_session_control_v1`). OpenWork has no request that answers a
 * permission or question: its desktops take those answers in the app only.
 */
export const OPENWORK_KIND_CAPABILITY: Partial<Record<TaskKind, string>> = {
  "remote_session.create": "remote_session_v1",
  "remote_session.send": "remote_session_control_v1",
  "remote_session.read": "remote_session_control_v1",
  "remote_session.stop": "remote_session_control_v1",
};
