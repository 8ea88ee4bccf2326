import type { LedgerSession } from "@openwork/remote-session-core";
import type { Dialect, SessionRelay } from "./dialect.js";

/** A dialect's name as rows store it: lowercase, digits and dashes (the SQL checks only this format). */
export const DIALECT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * The runner channels one desktop channel serves, as values the host passes in: shared code asks
 * this set for a row's dialect instead of importing a registry, so a third dialect is a value,
 * not an edit of this package.
 */
export interface DialectSet {
  /** Every dialect, the default (the one of whatever names none) first. */
  readonly all: readonly Dialect[];
  /**
   * The dialect of that name; the default for none. A name no dialect of the set has (rows of a
   * dialect since removed) reads as the default too: its runners can no longer authenticate, so
   * nothing acts for them.
   */
  of(name: string | null | undefined): Dialect;
  /** Whether `name` is the default dialect's (what a runner, task or session that names none speaks). */
  isDefault(name: string | null | undefined): boolean;
  /** The names of the dialects whose desktops are seen by their polls, not a stream. */
  readonly polling: readonly string[];
  /** The relay of a session held by a desktop that keeps its transcript (its dialect's), else null. */
  relayOf(session: Pick<LedgerSession, "targetRef" | "targetSessionId">): SessionRelay | null;
}

/** The set of `dialects` (the default first); throws on an empty list, a malformed name or a name twice. */
export function createDialectSet(dialects: readonly Dialect[]): DialectSet {
  const byName = new Map<string, Dialect>();
  for (const dialect of dialects) {
    if (!DIALECT_NAME.test(dialect.name)) throw new TypeError(`dialect name "${dialect.name}" must match ${DIALECT_NAME}`);
    if (byName.has(dialect.name)) throw new TypeError(`dialect "${dialect.name}" is given twice`);
    byName.set(dialect.name, dialect);
  }
  const fallback = dialects[0];
  if (!fallback) throw new TypeError("a desktop channel needs at least one dialect");
  const of = (name: string | null | undefined) => (name ? byName.get(name) : undefined) ?? fallback;
  return {
    all: dialects,
    of,
    isDefault: (name) => !name || name === fallback.name,
    polling: dialects.filter((dialect) => dialect.presence === "polls").map((dialect) => dialect.name),
    relayOf: (session) => {
      const name = session.targetRef.dialect;
      if (session.targetSessionId === null || typeof name !== "string") return null;
      return of(name).relay ?? null;
    },
  };
}
