import type { LedgerSession } from "@openwork/remote-session-core";
import type { Dialect, SessionRelay } from "./dialect.js";
import { desktopRunnerDialect } from "./desktop-runner/desktop-runner-dialect.js";
import { openworkDialect } from "./openwork/openwork-dialect.js";

/**
 * The runner channels this package can serve, each in its folder. Adding or removing one is its
 * folder and its line here; shared code looks a dialect up (`dialectOf`) instead of naming it.
 * A function, not a constant: the dialects' modules import shared code that imports this one, so
 * the list is read only once every module has loaded.
 */
const registered = () =>
  [
    desktopRunnerDialect, // ours: the first, the dialect of what names none
    openworkDialect,
  ] as const satisfies readonly Dialect[];

/** A registered dialect's name. */
export type DialectName = ReturnType<typeof registered>[number]["name"];

/** The registered dialects, ours first. */
export function registeredDialects(): readonly Dialect[] {
  return registered();
}

/**
 * The dialect of that name; ours (the first) for none. A name no dialect registers (rows of a
 * dialect since removed) reads as ours too: its runners can no longer authenticate, so nothing
 * acts for them.
 */
export function dialectOf(name: string | null | undefined): Dialect {
  const dialects = registeredDialects();
  return dialects.find((dialect) => dialect.name === name) ?? dialects[0]!;
}

/** Whether `name` is our protocol's, the dialect of a runner, task or session that names none. */
export function isDefaultDialect(name: string | null | undefined): boolean {
  return !name || name === registeredDialects()[0]!.name;
}

/** The names of the registered dialects whose desktops are seen by their polls, not a stream. */
export function pollingDialects(): string[] {
  return registeredDialects()
    .filter((dialect) => dialect.presence === "polls")
    .map((dialect) => dialect.name);
}

/** The relay of a session held by a desktop that keeps its transcript (its dialect's), else null. */
export function relayOf(session: Pick<LedgerSession, "targetRef" | "targetSessionId">): SessionRelay | null {
  const name = session.targetRef.dialect;
  if (session.targetSessionId === null || typeof name !== "string") return null;
  return dialectOf(name).relay ?? null;
}

export type { Dialect } from "./dialect.js";
