const MARK = Symbol.for("openwork.remote-session.sse-field");

/** Which part of an SSE frame was refused. */
export type SseField = "id" | "event" | "retry" | "comment";

/**
 * A field of an SSE frame could not be written as given: a line break in `id`, `event` or a
 * comment would end the field early and let the rest be read as other fields (a forged `data:`
 * line, say); a NUL in `id` makes readers ignore the id; `retry` must be a non-negative integer.
 * It is a programming error of the writer's caller, never something a client sent.
 */
export class SseFieldError extends Error {
  readonly [MARK] = true;
  override readonly name = "SseFieldError";
  constructor(
    readonly field: SseField,
    message: string,
  ) {
    super(`SSE ${field}: ${message}`);
  }

  /** Works across duplicated copies of this package, unlike `instanceof`. */
  static isInstance(value: unknown): value is SseFieldError {
    return typeof value === "object" && value !== null && MARK in value;
  }
}
