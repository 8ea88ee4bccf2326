/**
 * The logger every package takes. Fields carry ids, codes, sizes and durations — never prompt
 * text or message content.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/**
 * What a log line may say of an error: its class, and its code or status when it has one — never
 * its message, which may quote what a caller or a runner sent.
 */
export function errorFacts(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { class: typeof error };
  const { code, status } = error as { code?: unknown; status?: unknown };
  return { class: error.constructor.name, ...(typeof code === "string" ? { code } : {}), ...(typeof status === "number" ? { status } : {}) };
}
