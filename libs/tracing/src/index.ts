// Distributed tracing with OpenTelemetry: one trace per client request, across the gateway, the
// services, the subgraphs, inventory's gRPC calls and PostgreSQL. The SDK's instrumentations
// carry W3C `traceparent` on every HTTP and gRPC call.
//
// Each app starts it from `src/instrument.ts`, the first import of its main.ts: http, gRPC and pg
// must be patched before anything loads them.
//
// Configured by the standard OTEL_* variables:
// - OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): where spans go, over
//   OTLP/HTTP, protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL is http/json. Unset: the SDK is not
//   started at all. Its instrumentations would wrap every request, query and call to record
//   nothing, and cost about a quarter of each app's CPU (docs/benchmarks.md); the trace id still
//   flows, because service-kit's outgoing calls then pass the request's `traceparent` on
//   themselves, so every hop's logs and error bodies carry the client's trace id.
// - OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG: e.g. parentbased_traceidratio with 0.1.
// - OTEL_SERVICE_NAME (default: the app's name), OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*,
//   OTEL_SDK_DISABLED.
//
// The trace SDK alone, not @opentelemetry/sdk-node: that one loads metrics and logs SDKs and
// every exporter kind whether used or not, about 50 MiB resident per process for nothing here
// (metrics are Prometheus's, logs are stdout's).
import { type Span, trace } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, hostDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export type { Span };

/** Paths probes and scrapers call every few seconds: no trace of their own. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

let running: { provider: NodeTracerProvider; unpatch: () => void } | undefined;

/** Whether spans leave the process (an OTLP endpoint is set). */
export function exportingSpans(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/** The OTLP/HTTP exporter the protocol variables ask for; loaded only when spans are exported. */
function otlpExporter(env: NodeJS.ProcessEnv): SpanExporter {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol === 'http/json') return new (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  if (protocol === 'http/protobuf') return new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: spans are exported over OTLP/HTTP only; use http/protobuf (the default) or http/json`);
}

/** Whether the SDK runs in this process (its instrumentations then write `traceparent` on outgoing calls). */
export function tracingActive(): boolean {
  return running !== undefined;
}

export function startTracing(service: string): void {
  if (running || !exportingSpans()) return;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] })),
    // The OTEL_TRACES_SAMPLER variables decide what is recorded.
    spanProcessors: [new BatchSpanProcessor(otlpExporter(process.env))],
  });
  // The W3C trace-context and baggage propagators, and async-hooks context.
  provider.register();
  const unpatch = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]) }),
      new UndiciInstrumentation(), // fetch
      new GrpcInstrumentation(),
      // Queries inside a request's trace only: the background sweeps would each start a trace of their own.
      // No span per pool checkout: it doubles the spans of a request and says little.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  running = { provider, unpatch };
}

/** Sends the spans still buffered; part of a graceful stop. */
export async function stopTracing(): Promise<void> {
  if (!running) return;
  const { provider, unpatch } = running;
  running = undefined;
  unpatch();
  await provider.shutdown().catch(() => undefined);
  trace.disable();
}

/** The span of the request being served (the server span the HTTP instrumentation opened), if any. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/** The trace id of the active span; undefined without tracing or outside a request. */
export function activeTraceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  return context && trace.isSpanContextValid(context) ? context.traceId : undefined;
}
