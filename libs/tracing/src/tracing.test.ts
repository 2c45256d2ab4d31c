import { AsyncResource } from 'node:async_hooks';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, createContextKey, propagation, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { isWrapped } from '@opentelemetry/instrumentation';
import * as shimmer from '@opentelemetry/instrumentation/build/src/shimmer';
import { exportingSpans, instrumentedOnlyWhenRecording, sampledRequestsOnly, startTracing, stopTracing, tracingActive, unsampledTraceparent } from './index';

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

it("leaves a fetch of a request it does not sample to the caller: the undici instrumentation's span would record nothing", async () => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '200'; // nothing listens there: the sampled call's span is given up on at once when tracing stops
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.traceparent as string | undefined);
    res.end();
  });
  try {
    startTracing('tracing-test');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    // Not sampled: served around the instrumentations (sampledRequestsOnly); outgoing-calls writes its header (unsampledTraceparent).
    const unsampled = trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext({ traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE }));
    await context.with(unsampled, async () => {
      expect(unsampledTraceparent()).toBe(`00-${traceId}-00f067aa0ba902b7-00`);
      await (await fetch(url)).arrayBuffer();
    });
    // Sampled: the instrumentation records the call and writes its span into the header.
    const sampled = trace.getTracer('test').startSpan('request', undefined, propagation.extract(ROOT_CONTEXT, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }));
    await context.with(trace.setSpan(ROOT_CONTEXT, sampled), async () => (await fetch(url)).arrayBuffer());
    sampled.end();
    expect(seen).toEqual([undefined, expect.stringMatching(new RegExp(`^00-${traceId}-(?!00f067aa0ba902b7)[\\da-f]{16}-01$`))]);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
    await new Promise((resolve) => server.close(resolve));
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

describe('sampledRequestsOnly: the sampler decides before the HTTP instrumentation runs', () => {
  /** A server whose instrumented `emit` is a spy, serving with the gate in front of it; answers what each request's handler saw. */
  async function serve(requests: { traceparent?: string }[]) {
    const seen: { instrumented: boolean; recording?: boolean; traceId?: string; outgoing?: string; afterBody?: string }[] = [];
    let instrumented = false;
    const server = createServer((req, res) => {
      const span = trace.getActiveSpan();
      const entry = { instrumented, recording: span?.isRecording(), traceId: span?.spanContext().traceId, outgoing: unsampledTraceparent() };
      seen.push(entry);
      // After the body, continuing as the gateway's receiveBody (and raw-body) do, from a listener
      // bound to the request's context: the trace is still there though the body came later.
      req.on(
        'end',
        AsyncResource.bind(() => {
          (entry as { afterBody?: string }).afterBody = trace.getActiveSpan()?.spanContext().traceId;
          res.end();
        }),
      );
      req.resume();
    });
    const prototypeEmit = server.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
    server.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
      if (event !== 'request') return prototypeEmit.call(this, event, ...args);
      // Standing in for the instrumentation: it starts the server span, in the request's context, and binds the request to it.
      instrumented = true;
      const span = trace.getTracer('http').startSpan('GET', { kind: SpanKind.SERVER }, propagation.extract(context.active(), (args[0] as IncomingMessage).headers));
      try {
        const spanContext = trace.setSpan(context.active(), span);
        return context.with(spanContext, () => {
          context.bind(spanContext, args[0] as IncomingMessage);
          return prototypeEmit.call(this, event, ...args);
        });
      } finally {
        instrumented = false;
        span.end();
      }
    } as Server['emit'];
    sampledRequestsOnly(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // node:http, not fetch: the undici instrumentation would add a traceparent of the test's own to the caller's.
    const send = (traceparent?: string) =>
      new Promise<void>((resolve, reject) => {
        const sent = request({ host: '127.0.0.1', port, path: '/things', method: 'POST', headers: traceparent ? { traceparent, 'content-length': '1' } : { 'content-length': '1' } }, (res) => res.resume().on('end', resolve));
        sent.on('error', reject).flushHeaders();
        // The body in a packet of its own, once the request is being served.
        setTimeout(() => sent.end('x'), 5);
      });
    for (const { traceparent } of requests) await send(traceparent);
    await new Promise((resolve) => server.close(resolve));
    return seen;
  }

  beforeEach(() => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
    process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio';
    process.env.OTEL_TRACES_SAMPLER_ARG = '0.5';
    startTracing('tracing-test');
  });
  afterEach(() => {
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG']) delete process.env[name];
  });

  it("a caller's sampled trace goes through the instrumentation and is recorded", async () => {
    const [seen] = await serve([{ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }]);
    expect(seen).toEqual({ instrumented: true, recording: true, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', outgoing: undefined, afterBody: '4bf92f3577b34da6a3ce929d0e0e4736' });
  });

  it("a caller's trace not sampled is served around it, in its trace, and passed on not sampled", async () => {
    const [seen] = await serve([{ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' }]);
    expect(seen).toEqual({ instrumented: false, recording: false, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', outgoing: expect.stringMatching(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[\da-f]{16}-00$/), afterBody: '4bf92f3577b34da6a3ce929d0e0e4736' });
    expect(seen.outgoing).not.toContain('00f067aa0ba902b7'); // this hop's own span id, as the SDK gives a span it does not record
  });

  it('a new trace is sampled by the id it then carries: every request the gate lets through is recorded, the others are not', async () => {
    const seen = await serve(Array.from({ length: 40 }, () => ({})));
    const through = seen.filter((entry) => entry.instrumented);
    const around = seen.filter((entry) => !entry.instrumented);
    // At 0.5, both happen in 40 requests (a chance of 2 in a trillion that one does not).
    expect([through.length > 0, around.length > 0]).toEqual([true, true]);
    expect(through.every((entry) => entry.recording === true && entry.outgoing === undefined)).toBe(true);
    expect(around.every((entry) => entry.recording === false && entry.outgoing === `00-${entry.traceId}-${entry.outgoing?.slice(36, 52)}-00`)).toBe(true);
    expect(seen.every((entry) => /^[\da-f]{32}$/.test(entry.traceId ?? '') && entry.afterBody === entry.traceId)).toBe(true);
  });
});

it("sends a query of a request it does not sample past the pg instrumentation, and a sampled one's through it", () => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '200'; // nothing listens there: the sampled span is given up on at once when tracing stops
  try {
    startTracing('tracing-test');
    const calls: string[] = [];
    const original = function (this: { name: string }, sql: string, done?: () => void) {
      calls.push(`original ${this.name} ${sql}`);
      done?.();
      return 'rows';
    };
    class Client {
      name = 'client';
    }
    Object.assign(Client.prototype, { query: original });
    // Wrapped as the instrumentation does it (OpenTelemetry's shimmer: __original, __unwrap, __wrapped).
    shimmer.wrap(Client.prototype as unknown as { query: typeof original }, 'query', (wrapped) =>
      function (this: { name: string }, sql: string, done?: () => void) {
        calls.push('instrumented');
        return wrapped.call(this, sql, done);
      },
    );
    class PoolClient extends Client {}
    const client = new PoolClient() as PoolClient & { query(sql: string, done?: () => void): string };
    instrumentedOnlyWhenRecording(client, 'query'); // found up the prototype chain, replaced where it is defined
    const dispatcher = (Client.prototype as unknown as { query: unknown }).query;
    instrumentedOnlyWhenRecording(client, 'query'); // a second call stacks nothing
    expect((Client.prototype as unknown as { query: unknown }).query).toBe(dispatcher);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const unsampled = trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext({ traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE }));
    // A callback runs in its caller's context, as the instrumentation's binding did.
    const key = createContextKey('caller');
    let seenInCallback: unknown;
    const caller = unsampled.setValue(key, 'the caller');
    const finish = () => (seenInCallback = context.active().getValue(key));
    expect(context.with(caller, () => client.query('SELECT 1', finish))).toBe('rows');
    expect(calls.splice(0)).toEqual(['original client SELECT 1']);
    expect(seenInCallback).toBe('the caller');

    const sampled = trace.getTracer('test').startSpan('request', undefined, propagation.extract(ROOT_CONTEXT, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }));
    expect(sampled.isRecording()).toBe(true);
    expect(context.with(trace.setSpan(ROOT_CONTEXT, sampled), () => client.query('SELECT 2'))).toBe('rows');
    sampled.end();
    // Outside any request: the instrumentation's own rule (requireParentSpan) decides.
    client.query('SELECT 3');
    expect(calls.splice(0)).toEqual(['instrumented', 'original client SELECT 2', 'instrumented', 'original client SELECT 3']);

    // The instrumentation's unpatch (stopTracing) sees a wrapper and puts the original back.
    expect(isWrapped((Client.prototype as unknown as { query: unknown }).query)).toBe(true);
    shimmer.unwrap(Client.prototype as unknown as { query: typeof original }, 'query');
    expect((Client.prototype as unknown as { query: unknown }).query).toBe(original);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
  }
});

it('leaves a method alone when tracing is off or nothing wrapped it', () => {
  const plain = { query: () => 'rows' };
  const before = plain.query;
  instrumentedOnlyWhenRecording(plain, 'query'); // tracing off
  expect(plain.query).toBe(before);
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:4318';
  try {
    startTracing('tracing-test');
    instrumentedOnlyWhenRecording(plain, 'query'); // not wrapped
    expect(plain.query).toBe(before);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
});
