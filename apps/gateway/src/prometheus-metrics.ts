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
    /**
     * The text a scrape answers: everything recorded so far, and every gauge read now. A gauge
     * that could not be read (PostgreSQL gone) fails the scrape, as a 500 with a referenceId,
     * rather than answering figures with holes an alert would take for zeros.
     */
    text: async (): Promise<string> => {
      const { resourceMetrics, errors } = await exporter.collect();
      if (errors.length > 0) throw new AggregateError(errors, "a metric could not be collected");
      return serializer.serialize(resourceMetrics);
    },
    close: () => meterProvider.shutdown(),
  };
}
