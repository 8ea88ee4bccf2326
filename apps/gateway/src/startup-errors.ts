/** A start-up failure a person can act on: one line, naming the setting to fix. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

// The PostgreSQL error codes a misconfigured DATABASE_URL produces.
const PRIVILEGE = "42501";
const CONNECTION = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "28P01", "28000", "3D000", "CONNECT_TIMEOUT"]);

/**
 * Turns what a database call threw at start into a StartupError naming DATABASE_URL — a bad
 * address, credentials or database, or a role that may not create tables — or returns it as is.
 * Never prints the URL itself (it holds a password).
 */
export function explainDatabaseError(error: unknown, stage: "connect" | "migrate"): unknown {
  const code = String((error as { code?: unknown }).code ?? "");
  if (code === PRIVILEGE) {
    return new StartupError(
      "DATABASE_URL: this role may not create the gateway's tables. PostgreSQL 15+ needs `GRANT CREATE ON SCHEMA public TO <role>` (or a database the role owns).",
    );
  }
  if (stage === "connect" || CONNECTION.has(code)) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return new StartupError(`DATABASE_URL: cannot reach PostgreSQL (${code || "error"}: ${reason}). Check the host, port, user, password and database name.`);
  }
  return error;
}
