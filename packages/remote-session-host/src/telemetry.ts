import { type MeterProvider, metrics, type TracerProvider, trace } from "@opentelemetry/api";

/** The instrumentation scope of everything the host records (its meter's and tracer's name). */
export const TELEMETRY_SCOPE = "@openwork/remote-session-host";

/** Where a host's metrics and traces go; each defaults to the global provider of `@opentelemetry/api`. */
export interface HostTelemetry {
  meterProvider?: MeterProvider;
  tracerProvider?: TracerProvider;
}

/** The host's providers, each the global one where the host gave none: resolved once, at composition. */
export function telemetryOf(telemetry: HostTelemetry = {}): Required<HostTelemetry> {
  return { meterProvider: telemetry.meterProvider ?? metrics.getMeterProvider(), tracerProvider: telemetry.tracerProvider ?? trace.getTracerProvider() };
}
