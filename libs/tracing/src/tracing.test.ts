import { context, propagation, trace } from '@opentelemetry/api';
import { exportingSpans, startTracing, stopTracing, tracingActive } from './index';

afterEach(async () => {
  await stopTracing();
});

it('exports only when an OTLP endpoint is set and the SDK is not disabled', () => {
  expect(exportingSpans({})).toBe(false);
  expect(exportingSpans({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
  expect(exportingSpans({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
  expect(exportingSpans({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
});

it("without an endpoint starts nothing: spans are the API's no-ops and outgoing calls are left to service-kit", () => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  startTracing('tracing-test');
  expect(tracingActive()).toBe(false);
  const span = trace.getTracer('test').startSpan('request');
  expect([span.isRecording(), trace.isSpanContextValid(span.spanContext())]).toEqual([false, false]);
  span.end();
});

it("with an endpoint runs the SDK: a request's span continues the client's trace and is recorded", () => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
  try {
    startTracing('tracing-test');
    expect(tracingActive()).toBe(true);
    const incoming = propagation.extract(context.active(), { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const span = trace.getTracer('test').startSpan('request', undefined, incoming);
    expect([span.isRecording(), span.spanContext().traceId]).toEqual([true, '4bf92f3577b34da6a3ce929d0e0e4736']);
    const outgoing: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), outgoing);
    expect(outgoing.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[\da-f]{16}-01$/);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
});

it('refuses an OTLP protocol it cannot speak, naming the variable', () => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4317';
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'grpc';
  try {
    expect(() => startTracing('tracing-test')).toThrow('OTEL_EXPORTER_OTLP_PROTOCOL=grpc');
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  }
});
