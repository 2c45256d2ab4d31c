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
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import { context, propagation, ROOT_CONTEXT, type Sampler as ApiSampler, SamplingDecision, type Span, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, hostDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, RandomIdGenerator, type Sampler, type SpanExporter, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export type { Span };

/** Paths probes and scrapers call every few seconds: no trace of their own. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

let running: { provider: NodeTracerProvider; unpatch: () => void; sampler?: Sampler } | undefined;

/**
 * The sampler OTEL_TRACES_SAMPLER names, built here rather than by the SDK when it is one whose
 * decision can be taken before the HTTP instrumentation runs (sampledRequestsOnly): it depends on
 * the caller's `traceparent` and the trace id alone. Undefined for any other (the SDK builds it).
 */
function headSampler(env: NodeJS.ProcessEnv): Sampler | undefined {
  const argument = Number(env.OTEL_TRACES_SAMPLER_ARG ?? 1);
  // As the SDK reads it: a missing or unreadable ratio is 1, and it is kept within [0, 1].
  const ratio = () => new TraceIdRatioBasedSampler(Number.isFinite(argument) ? Math.min(1, Math.max(0, argument)) : 1);
  switch (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return undefined;
  }
}

const randomIds = new RandomIdGenerator();
/** The trace id sampledRequestsOnly drew and sampled for a request that starts a trace: its server span takes it. */
let drawnTraceId: string | undefined;

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
  const sampler = headSampler(process.env);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] })),
    // The OTEL_TRACES_SAMPLER variables decide what is recorded.
    ...(sampler ? { sampler } : {}),
    // A new trace's id is the one its request was sampled by (sampledRequestsOnly), taken once, synchronously.
    idGenerator: {
      generateTraceId: () => {
        const drawn = drawnTraceId;
        drawnTraceId = undefined;
        return drawn ?? randomIds.generateTraceId();
      },
      generateSpanId: () => randomIds.generateSpanId(),
    },
    spanProcessors: [new BatchSpanProcessor(otlpExporter(process.env))],
  });
  // The W3C trace-context and baggage propagators, and async-hooks context.
  provider.register();
  const unpatch = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]) }),
      // fetch and undici pools (outgoing-calls). A call from a request that is not sampled skips it:
      // its span would record nothing, and outgoing-calls writes the call's `traceparent` itself
      // (service-kit's outgoingTraceparent), as the gateway's proxy does around the HTTP instrumentation.
      new UndiciInstrumentation({ ignoreRequestHook: () => unsampledTraceparent() !== undefined }),
      new GrpcInstrumentation(),
      // Queries inside a request's trace only: the background sweeps would each start a trace of their own.
      // No span per pool checkout: it doubles the spans of a request and says little.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  running = { provider, unpatch, sampler };
}

/**
 * Serves the requests the sampler will not record without the HTTP instrumentation's work for
 * them. The instrumentation wraps every request: it reads its attributes (the URL parsed, the
 * peer, the headers), starts a span, watches the answer to end it, and does the same for every
 * outgoing call; for a request that is not sampled all of that records nothing, and with 10 %
 * sampling it is most of tracing's cost (docs/benchmarks.md). Here the sampler's decision is taken
 * first, as the SDK would take it (the same sampler, the caller's `traceparent`, the trace id): a
 * sampled request goes through the instrumentation as before, its new trace keeping the id it
 * was sampled by; any other is served in the context the instrumentation would have given it, a
 * non-recording span of the trace (the caller's, or a new one). So every hop still carries and
 * logs the trace id, calls from the request still pass `traceparent` on (not sampled), and what
 * is exported does not change.
 * Unlike the instrumentation, the request and its answer are not bound to that context (the
 * context manager would wrap every listener added to them, about half of what tracing cost such a
 * request, docs/benchmarks.md). Listeners run in the context of whatever emits their event; the
 * code that continues a request from one binds itself to the request's context: the gateway's
 * receiveBody and body-parser's raw-body (AsyncResource.bind). What else listens on a request or
 * its answer (logs, metrics, usage) reads what it needs from `res.locals`.
 * With a sampler it cannot decide for ahead (OTEL_TRACES_SAMPLER jaeger_remote, xray…) or
 * without the SDK, the server is left as it is.
 */
export function sampledRequestsOnly(server: Server): void {
  const sampler: ApiSampler | undefined = running?.sampler;
  if (!sampler) return;
  type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
  const instrumented = server.emit as Emit;
  const uninstrumented = EventEmitter.prototype.emit as Emit;
  server.emit = function emit(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'request' || !running) return instrumented.call(this, event, ...args);
    const req = args[0] as IncomingMessage;
    // Probes and scrapes: the instrumentation's own rule (ignoreIncomingRequestHook).
    if (UNTRACED_PATHS.has((req.url ?? '').split('?')[0])) return instrumented.call(this, event, ...args);
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const parentSpan = trace.getSpanContext(parent);
    const continues = parentSpan !== undefined && trace.isSpanContextValid(parentSpan);
    const traceId = continues ? parentSpan.traceId : randomIds.generateTraceId();
    const decision = sampler.shouldSample(parent, traceId, req.method ?? 'GET', SpanKind.SERVER, {}, []);
    if (decision.decision !== SamplingDecision.NOT_RECORD) {
      drawnTraceId = continues ? undefined : traceId;
      try {
        return instrumented.call(this, event, ...args);
      } finally {
        drawnTraceId = undefined;
      }
    }
    const unsampled = trace.setSpan(parent, trace.wrapSpanContext({ traceId, spanId: randomIds.generateSpanId(), traceFlags: TraceFlags.NONE, traceState: decision.traceState ?? parentSpan?.traceState }));
    return context.with(unsampled, () => uninstrumented.call(this, event, ...args));
  } as Server['emit'];
}

/**
 * The `traceparent` for a call the current request makes around the instrumentation (the
 * gateway's proxy, for a request not sampled): this hop's trace, not sampled. Undefined when the
 * instrumentation writes it (a recording span) or there is no trace.
 */
export function unsampledTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span || span.isRecording()) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? `00-${traceId}-${spanId}-0${traceFlags & TraceFlags.SAMPLED}` : undefined;
}

/** Marks instrumentedOnlyWhenRecording's dispatcher, so a second call does not stack another. */
const UNSAMPLED_DISPATCH = Symbol('unsampled dispatch');

/**
 * Leaves a method an instrumentation wrapped (pg's `Client.prototype.query`, pg-pool's `connect`)
 * to its original while the active span belongs to a trace the sampler left out. The pg
 * instrumentation would build the query's attributes, parse its operation name, start a span that
 * records nothing, wrap the callback and time the query for a meter nobody reads
 * (docs/benchmarks.md). A sampled trace's queries, and queries outside any request, still go
 * through it as before. The one thing the instrumentation did that still matters is kept: a
 * callback runs in its caller's context (pg-pool hands a waiting caller the client another request
 * released, inside that request's context otherwise). Looks the method up the prototype chain;
 * does nothing when it was not wrapped (tracing off, the instrumentation not loaded) or is this
 * dispatcher already.
 */
export function instrumentedOnlyWhenRecording(owner: object, method: string): void {
  let holder: object | null = owner;
  while (holder && !Object.prototype.hasOwnProperty.call(holder, method)) holder = Object.getPrototypeOf(holder) as object | null;
  if (!holder || !running) return;
  type Method = (...args: unknown[]) => unknown;
  type Wrapped = Method & { __original?: Method; __unwrap?: () => void; __wrapped?: boolean; [UNSAMPLED_DISPATCH]?: true };
  const target = holder as Record<string, Wrapped>;
  const instrumented = target[method];
  const original = instrumented.__original;
  if (typeof original !== 'function' || instrumented[UNSAMPLED_DISPATCH]) return;
  const dispatch: Wrapped = function (this: unknown, ...args: unknown[]) {
    const span = trace.getActiveSpan();
    if (!span || span.spanContext().traceFlags & TraceFlags.SAMPLED) return instrumented.apply(this, args);
    const last = args.length - 1;
    if (typeof args[last] === 'function') args[last] = context.bind(context.active(), args[last] as Method);
    return original.apply(this, args);
  };
  // As OpenTelemetry's shimmer marks a wrapper, so stopTracing's unpatch (which checks __wrapped)
  // puts the original back, as it would have done without this.
  for (const [key, value] of [
    ['__original', original],
    ['__wrapped', true],
    ['__unwrap', () => {
      if (target[method] === dispatch) target[method] = original;
    }],
    [UNSAMPLED_DISPATCH, true],
  ] as const) Object.defineProperty(dispatch, key, { value, enumerable: false, configurable: true });
  target[method] = dispatch;
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
