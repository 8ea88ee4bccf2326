/** A span's identity as W3C trace context carries it (the shape of OpenTelemetry's `SpanContext`). */
export interface TraceIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = /^0+$/;

/**
 * The W3C `traceparent` of a span (version 00), or null without one or for the all-zero ids of a
 * span nobody records (no telemetry SDK installed): a task or a request then carries nothing.
 */
export function formatTraceparent(ids: TraceIds | undefined): string | null {
  if (!ids || INVALID_TRACE.test(ids.traceId) || INVALID_TRACE.test(ids.spanId)) return null;
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The span a `traceparent` names, or null for anything that is not a valid version-00 value. */
export function parseTraceparent(value: string | null | undefined): TraceIds | null {
  const match = value ? TRACEPARENT.exec(value) : null;
  if (!match || INVALID_TRACE.test(match[1]!) || INVALID_TRACE.test(match[2]!)) return null;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16) };
}
