// One client request, one trace: POST /v1/orders crosses the gateway, orders-service, catalog
// (prices over HTTP) and inventory (stock over gRPC), and on PostgreSQL the queries too. The apps
// export their spans to the suite's loopback OTLP receiver (global-setup.ts); this suite reads
// them back and checks every parent/child link.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { apiClient } from '@platform/test-kit';
import type { ReceivedSpan } from './span-receiver';
import { STOCKED_PRODUCTS, gatewayUrl, stackState } from './stack';
import { useContract } from './contract';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);
const SERVER = 2;
const CLIENT = 3;

function spansOf(traceId: string): ReceivedSpan[] {
  return readFileSync(stackState().spansFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes(traceId))
    .map((line) => JSON.parse(line) as ReceivedSpan)
    .filter((span) => span.traceId === traceId);
}

/** The trace's spans once every service named has exported its part (spans leave in batches). */
async function traceWith(traceId: string, services: string[]): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const spans = spansOf(traceId);
    if (services.every((service) => spans.some((span) => span.service === service && span.kind === SERVER))) return spans;
    if (Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A new customer's token, and a product in stock to order. */
async function customerWithProduct(name: string): Promise<{ token: string; productId: string }> {
  const email = `${name}-${Date.now()}@example.com`;
  const password = `${name}-password-1`;
  await call('POST', '/v1/users', { body: { name, email, password } });
  const token = (await call('POST', '/v1/tokens', { body: { email, password } })).body.accessToken as string;
  return { token, productId: (await call('GET', STOCKED_PRODUCTS, { token })).body.items[0].id as string };
}

it('follows POST /v1/orders through every hop in one trace, each span the child of the call that caused it', async () => {
  const { token, productId } = await customerWithProduct('traced');

  const traceId = randomBytes(16).toString('hex');
  const clientSpanId = randomBytes(8).toString('hex');
  const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] }, headers: { traceparent: `00-${traceId}-${clientSpanId}-01` } });
  expect(placed.status).toBe(201);
  expect(placed.headers.get('x-request-id')).toBe(traceId); // the id a client quotes is the trace's

  const services = ['gateway', 'orders-service', 'catalog-service', 'inventory-service'];
  const spans = await traceWith(traceId, services);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);
  const serverSpan = (service: string) => spans.find((span) => span.service === service && span.kind === SERVER);

  // The gateway continues the client's trace; every other span's parent is in the trace.
  const edge = serverSpan('gateway');
  expect(edge).toMatchObject({ parentSpanId: clientSpanId, name: 'POST /v1/orders' });
  expect(spans.filter((span) => span !== edge && !byId.has(span.parentSpanId)).map((span) => `${span.service} ${span.name}`)).toEqual([]);

  // Each service's server span hangs under a client span of the service that called it.
  const calledBy = (service: string) => {
    const server = serverSpan(service);
    const caller = server && parentOf(server);
    return caller && { service: caller.service, kind: caller.kind };
  };
  expect(calledBy('orders-service')).toEqual({ service: 'gateway', kind: CLIENT });
  expect(calledBy('catalog-service')).toEqual({ service: 'orders-service', kind: CLIENT });
  expect(calledBy('inventory-service')).toEqual({ service: 'orders-service', kind: CLIENT });
  expect(serverSpan('orders-service')?.name).toBe('POST /orders');
  expect(serverSpan('inventory-service')?.name).toMatch(/^grpc\.inventory\.v1\.Inventory\//);

  if (process.env.TEST_DATABASE_URL) {
    // On PostgreSQL, orders' queries are spans under its request (PGlite runs in-process, unseen).
    const queries = spans.filter((span) => span.service === 'orders-service' && span.attributes['db.system.name'] === 'postgresql');
    expect(queries.length).toBeGreaterThan(0);
  }
});

// A client that did not sample its trace: every hop serves it without recording (the sampler is
// parent-based), around the instrumentations (libs/tracing sampledRequestsOnly), and still passes
// the trace on, over HTTP (orders → catalog, through outgoing-calls) and gRPC (orders → inventory).
it("passes a trace its client did not sample through every hop unrecorded: each service logs the request under the client's trace id, and no span of it is exported", async () => {
  const { token, productId } = await customerWithProduct('unsampled');

  const traceId = randomBytes(16).toString('hex');
  const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] }, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00` } });
  expect([placed.status, placed.headers.get('x-request-id')]).toEqual([201, traceId]);

  const services = ['gateway', 'orders-service', 'catalog-service', 'inventory-service'];
  const loggedBy = () =>
    new Set(
      readFileSync(stackState().logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes(traceId))
        // Each app's lines, prefixed with its name by the starter: the JSON line follows.
        .map((line) => (JSON.parse(line.slice(line.indexOf('{'))) as { service?: string }).service),
    );
  const deadline = Date.now() + 10_000;
  while (!services.every((service) => loggedBy().has(service)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  expect([...loggedBy()].sort()).toEqual([...services].sort());
  // Spans leave in batches every 200 ms here (global-setup.ts): a second is five of them.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(spansOf(traceId)).toEqual([]);
});

it('puts the trace id of the request in its error body and X-Request-Id', async () => {
  const traceId = randomBytes(16).toString('hex');
  const missing = await call('GET', '/v1/orders/no-such-order', { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
  expect([missing.status, missing.body.traceId, missing.headers.get('x-request-id')]).toEqual([401, traceId, traceId]);
});
