import { SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { RemoteSessionSource } from "@openwork/mcp-capability";

/**
 * The capability source with each `execute` in a span of its own (`remote-session:<action>`),
 * active while it runs: the desktop task it queues keeps the span's context for the runner's
 * claim, events and completion, and the cloud worker's calls carry it. The span names the
 * capability, the session and the outcome's error code; never a prompt or an answer.
 */
export function tracedSource(source: RemoteSessionSource, tracer: Tracer): RemoteSessionSource {
  return {
    ...source,
    execute: (ctx, parsed, input, options) =>
      tracer.startActiveSpan(parsed.name, { kind: SpanKind.INTERNAL, attributes: { "openwork.capability": parsed.name } }, async (span) => {
        try {
          const result = await source.execute(ctx, parsed, input, options);
          const outcome = result.structuredContent;
          if (typeof outcome.sessionId === "string") span.setAttribute("openwork.session_id", outcome.sessionId);
          if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: String(outcome.error ?? "error") });
          return result;
        } finally {
          span.end();
        }
      }),
  };
}
