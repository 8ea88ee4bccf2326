import type { MeterProvider, TracerProvider } from "@opentelemetry/api";

/** The instrumentation scope of everything the host records (its meter's and tracer's name). */
export const TELEMETRY_SCOPE = "@openwork/remote-session-host";

/** Where a host's metrics and traces go; each defaults to the global provider of `@opentelemetry/api`. */
export interface HostTelemetry {
  meterProvider?: MeterProvider;
  tracerProvider?: TracerProvider;
}
