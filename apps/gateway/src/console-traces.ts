import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ConsoleSpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

/**
 * `TRACES=console`: every span printed to stdout as it ends. The process's context manager
 * (AsyncLocalStorage) carries a capability call's span into the work it starts, so the task it
 * queues and the worker calls it makes join its trace; without it nothing is active to join.
 */
export function consoleTraces(): { tracerProvider: TracerProvider; close(): Promise<void> } {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter() })] });
  return { tracerProvider, close: () => tracerProvider.shutdown() };
}
