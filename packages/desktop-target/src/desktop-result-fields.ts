import type { ResultFields } from "@openwork/remote-session-core";
import type { RunnerPresence } from "./presence.js";

/** The members the desktop target adds to its results, beside the core's. */
export const DESKTOP_RESULT_FIELDS = {
  create: {
    runner: "The desktop the session went to ({ runnerId, name }), when it is pinned to one.",
    expiresAt: "Store-and-forward deadline: the task expires if no desktop takes it by then.",
  },
  read: {
    waitingFor: "A queued session: the desktop its next turn is pinned to, and the deadline.",
    deferred: "The OpenWork desktop had not answered the read within the call: read again with this cursor.",
  },
  targets: { machines: "Each of the member's desktops ({ computerId, name, platform, online, lastSeenAt })." },
} as const satisfies ResultFields;

/** Other names callers give `runner`: OpenWork's `computerId`, the proposal's `runnerId`. */
export const DESKTOP_ARGUMENT_ALIASES = { runnerId: "runner", computerId: "runner" } as const;

/** The member's desktops as `targets` shows them: OpenWork names a desktop's id `computerId`. */
export const asComputers = (machines: readonly RunnerPresence[]) => machines.map(({ runnerId, ...m }) => ({ computerId: runnerId, ...m }));
