import type { Logger, MemberScope } from "@openwork/remote-session-core";

/**
 * The open streams' membership re-check for one process: every `intervalMs` (the channel's
 * `membershipCheckMs`), each member with a stream here is asked once (`isActiveMember`), however
 * many of its desktops stream, and the streams of a member no longer active end. One timer for
 * the process, running only while it holds a stream; a host whose `isActiveMember` reads its
 * database pays a statement per member and interval, not per desktop. A check that fails leaves
 * the streams open (the next one asks again).
 */
export interface StreamMembership {
  /** Watches one stream of the member until the returned function is called; `end` closes it. */
  watch(scope: MemberScope, end: () => void): () => void;
  /** Checks every watched member now; resolves once the checks have answered. */
  check(): Promise<void>;
  stats(): { members: number; streams: number };
}

interface MembershipState {
  readonly isActiveMember: (scope: MemberScope) => Promise<boolean>;
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Per member (`memberKey`): its scope and its streams' end functions. */
  readonly members: Map<string, { scope: MemberScope; ends: Set<() => void> }>;
  timer: ReturnType<typeof setInterval> | null;
}

const memberKey = (scope: MemberScope) => `${scope.organizationId}\u0000${scope.memberId}`;

export function createStreamMembership(options: {
  isActiveMember(scope: MemberScope): Promise<boolean>;
  intervalMs: number;
  logger: Logger;
}): StreamMembership {
  const state: MembershipState = {
    isActiveMember: options.isActiveMember,
    intervalMs: options.intervalMs,
    logger: options.logger,
    members: new Map(),
    timer: null,
  };
  return {
    watch: (scope, end) => watch(state, scope, end),
    check: () => checkAll(state),
    stats: () => ({ members: state.members.size, streams: [...state.members.values()].reduce((n, m) => n + m.ends.size, 0) }),
  };
}

function watch(state: MembershipState, scope: MemberScope, end: () => void): () => void {
  const key = memberKey(scope);
  const member = state.members.get(key) ?? { scope: { organizationId: scope.organizationId, memberId: scope.memberId }, ends: new Set() };
  // Its own function, so two streams handing the same `end` stay two.
  const entry = () => end();
  member.ends.add(entry);
  state.members.set(key, member);
  if (!state.timer) {
    state.timer = setInterval(() => void checkAll(state), state.intervalMs);
    state.timer.unref();
  }
  return () => {
    if (!member.ends.delete(entry) || member.ends.size > 0) return;
    if (state.members.get(key) === member) state.members.delete(key);
    if (state.members.size === 0 && state.timer) {
      clearInterval(state.timer);
      state.timer = null;
    }
  };
}

async function checkAll(state: MembershipState): Promise<void> {
  await Promise.all(
    [...state.members.values()].map(async (member) => {
      try {
        if (await state.isActiveMember(member.scope)) return;
      } catch (error) {
        state.logger.warn("desktop runner: a stream's membership check failed", { error: String(error) });
        return;
      }
      for (const end of [...member.ends]) end();
    }),
  );
}
