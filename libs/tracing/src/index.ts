// Distributed tracing with OpenTelemetry: one trace per client request, across the gateway, the
// services, the subgraphs, inventory's gRPC calls and PostgreSQL. The SDK's instrumentations
// carry W3C `traceparent` on every HTTP and gRPC call, so no code of ours builds that header.
//
// Each app starts it from `src/instrument.ts`, the first import of its main.ts: http, gRPC and pg
// must be patched before anything loads them.
//
// Configured by the standard OTEL_* variables (read by @opentelemetry/sdk-node):
// - OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): where spans go, over
//   OTLP/HTTP. Unset: nothing is recorded or sent, and trace context still flows, so every hop's
//   logs and error bodies carry the client's trace id.
// - OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG: e.g. parentbased_traceidratio with 0.1.
// - OTEL_SERVICE_NAME (default: the app's name), OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED.
import { type Span, trace } from '@opentelemetry/api';

export type { Span };
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';

/** Paths probes and scrapers call every few seconds: no trace of their own. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

let sdk: NodeSDK | undefined;

/** Whether spans leave the process (an OTLP endpoint is set). */
export function exportingSpans(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

export function startTracing(service: string): void {
  if (sdk || process.env.OTEL_SDK_DISABLED === 'true') return;
  process.env.OTEL_SERVICE_NAME ??= service;
  // Metrics are Prometheus's (/metrics) and logs are stdout's: the SDK exports traces only.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  if (!exportingSpans()) {
    // Nowhere to send spans: record none (no cost beyond the ids), send nothing.
    process.env.OTEL_TRACES_EXPORTER = 'none';
    process.env.OTEL_TRACES_SAMPLER = 'always_off';
  }
  sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]) }),
      new UndiciInstrumentation(), // fetch
      new GrpcInstrumentation(),
      // Queries inside a request's trace only: the background sweeps would each start a trace of their own.
      // No span per pool checkout: it doubles the spans of a request and says little.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  sdk.start();
}

/** Sends the spans still buffered; part of a graceful stop. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
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
