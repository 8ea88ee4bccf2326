import type { Dialect } from "./dialect.js";
import { desktopRunnerDialect } from "./desktop-runner/desktop-runner-dialect.js";
import { openworkDialect } from "./openwork/openwork-dialect.js";

/**
 * The runner channels this package can serve, each in its folder. Adding or removing one is its
 * folder and its line here; shared code looks a dialect up (`dialectOf`) instead of naming it.
 * A function, not a constant: the dialects' modules import shared code that imports this one, so
 * the list is read only once every module has loaded.
 */
const registered = () => [desktopRunnerDialect, openworkDialect] as const satisfies readonly Dialect[];

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
  const dialects = registered();
  return dialects.find((dialect) => dialect.name === name) ?? dialects[0];
}

/** Whether `name` is our protocol's, the dialect of a runner, task or session that names none. */
export function isDefaultDialect(name: string | null | undefined): boolean {
  return !name || name === registered()[0].name;
}

/** The names of the registered dialects whose desktops are seen by their polls, not a stream. */
export function pollingDialects(): string[] {
  return registered()
    .filter((dialect) => dialect.presence === "polls")
    .map((dialect) => dialect.name);
}

export type { Dialect } from "./dialect.js";
