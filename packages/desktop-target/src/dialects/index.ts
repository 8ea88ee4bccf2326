import type { Dialect } from "./dialect.js";
import { desktopRunnerDialect } from "./desktop-runner/desktop-runner-dialect.js";
import { openworkDialect } from "./openwork/openwork-dialect.js";

/**
 * The runner channels this package ships, ours first (the dialect of what names none): the
 * default of a desktop channel's `dialects`. Only the composition imports this module; shared code
 * is handed a `DialectSet`, so the dialects' modules and the code they use import no registry.
 */
export function builtInDialects(): readonly Dialect[] {
  return [desktopRunnerDialect, openworkDialect];
}

export type { Dialect } from "./dialect.js";
export { createDialectSet, type DialectSet } from "./dialect-set.js";
