const MARK = Symbol.for("openwork.remote-session.sse-silent");

/** An event stream sent no byte (not even a keepalive) for `silenceMs`, connecting included: it is taken as dead. */
export class SseSilentError extends Error {
  readonly [MARK] = true;
  override readonly name = "SseSilentError";
  constructor(readonly silenceMs: number) {
    super("the event stream went silent");
  }

  /** Works across duplicated copies of this package, unlike `instanceof`. */
  static isInstance(value: unknown): value is SseSilentError {
    return typeof value === "object" && value !== null && MARK in value;
  }
}
