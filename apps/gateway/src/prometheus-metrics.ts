import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

/**
 * The reference gateway's metrics: an OpenTelemetry meter provider the host records on, read in
 * the Prometheus text format when `/metrics` is scraped (the exporter's own server is not
 * started). Without scope labels and `target_info`, the samples keep the names and labels the
 * gateway's dashboards already use.
 */
export function prometheusMetrics() {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const serializer = new PrometheusSerializer(undefined, false, undefined, true, true);
  return {
    meterProvider,
    /** The text a scrape answers: everything recorded so far, and every gauge read now. */
    text: async (): Promise<string> => serializer.serialize((await exporter.collect()).resourceMetrics),
    close: () => meterProvider.shutdown(),
  };
}
