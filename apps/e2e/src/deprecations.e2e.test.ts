// Deprecations, brownouts and sunsets through the running stack: a second gateway, the built one
// (dist/apps/gateway/main.js), is started beside the stack's on the same services with a registry
// of this suite's own (DEPRECATIONS_FILE), so the other suites keep the repository's registry and
// its document. What a client sees: the headers only when it uses a deprecated element, 410 GONE
// in a brownout and after the sunset, a response field left out in its brownout, a dry run that
// passes and is counted, GraphQL's field left out (null, GONE at its path); and a malformed registry that keeps the gateway down.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiClient, stackPorts } from '@platform/test-kit';
import { gatewayUrl, PORT_OFFSET, STOCKED_PRODUCTS, stackState } from './stack';

const root = path.resolve(__dirname, '../../..');
const ports = stackPorts(PORT_OFFSET);
const port = ports.gateway + 50;
const metricsPort = ports.metrics + 50;
const retiringUrl = `http://127.0.0.1:${port}`;
const notice = 'https://docs.example.com/changes/';
const always = '    brownouts:\n      - start: 2020-01-01T00:00:00Z\n        end: 2098-01-01T00:00:00Z\n';

const REGISTRY = `deprecations:
  - element: "rest:GET /v1/order-items/{id}"
    replacement: "rest:GET /v1/orders/{id}/items"
    announced: 2026-01-01
    sunset: 2099-01-01
    notice: ${notice}order-items
  - element: "rest:GET /v1/products query.maxPrice"
    replacement: "rest:GET /v1/products query.priceAtMost"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}max-price
${always}  - element: "rest:GET /v1/products query.minPrice"
    replacement: "rest:GET /v1/products query.priceAtLeast"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}min-price
    brownouts:
      - start: 2020-01-01T00:00:00Z
        end: 2098-01-01T00:00:00Z
        dryRun: true
  - element: "rest:GET /v1/products query.q"
    replacement: "rest:POST /v1/products/search"
    announced: 2020-01-01
    sunset: 2021-01-01
    notice: ${notice}q
  - element: "rest:POST /v1/orders request.body.couponCode"
    replacement: "rest:PATCH /v1/orders/{id} request.body.couponCode"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}coupon
${always}  - element: "rest:GET /v1/orders/{id}/shipment response.200.body.trackingNumber"
    replacement: "rest:GET /v1/orders/{id}/shipment response.200.body.trackingUrl"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}tracking-number
  - element: "rest:GET /v1/orders/{id}/shipment response.200.body.carrier"
    replacement: "rest:GET /v1/orders/{id}/shipment response.200.body.carrierCode"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}carrier
${always}  - element: "graphql:Shipment.trackingNumber"
    replacement: "graphql:Shipment.trackingUrl"
    announced: 2026-06-01
    sunset: 2099-06-01
    notice: ${notice}tracking-number
${always}`;

interface Started {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

function startGateway(registryFile: string): Started {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    USERS_URL: `http://127.0.0.1:${ports.users}`,
    ORDERS_URL: `http://127.0.0.1:${ports.orders}`,
    CATALOG_URL: `http://127.0.0.1:${ports.catalog}`,
    INVENTORY_URL: `http://127.0.0.1:${ports.inventory}`,
    JWT_SECRET: process.env.E2E_JWT_SECRET,
    RATE_LIMIT_POINTS: '100000',
    LOG_LEVEL: 'info',
    APOLLO_TELEMETRY_DISABLED: 'true',
    DEPRECATIONS_FILE: registryFile,
  };
  const child = spawn(process.execPath, [path.join(root, 'dist/apps/gateway/main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function ready(started: Started): Promise<void> {
  let down = false;
  void started.exited.then(() => (down = true));
  for (let attempt = 0; attempt < 300 && !down; attempt++) {
    const answered = await fetch(`${retiringUrl}/readyz`).then((res) => res.status === 200, () => false);
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the second gateway did not start:\n${started.output.join('\n')}`);
}

function registryFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'e2e-deprecations-')), 'deprecations.yaml');
  writeFileSync(file, text);
  return file;
}

async function counted(element: string, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('gateway_deprecated_element_calls_total{') && candidate.includes(`element="${element}"`) && candidate.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const stack = apiClient(() => gatewayUrl);
const retiring = apiClient(() => retiringUrl);
const DEPRECATION_HEADERS = ['deprecation', 'sunset', 'link', 'deprecated-fields'];
const deprecationHeadersOf = (res: { headers: Headers }) => DEPRECATION_HEADERS.filter((name) => res.headers.has(name));

let gateway: Started;
let admin: string;
let customer: string;
let productId: string;

beforeAll(async () => {
  gateway = startGateway(registryFile(REGISTRY));
  await ready(gateway);
  admin = stackState().adminToken;
  const email = `deprecations-${Date.now()}@example.com`;
  expect((await stack('POST', '/v1/users', { body: { name: 'Old Client', email, password: 'old-client-password-1' } })).status).toBe(201);
  customer = (await stack('POST', '/v1/tokens', { body: { email, password: 'old-client-password-1' } })).body.accessToken as string;
  productId = (await stack('GET', STOCKED_PRODUCTS, { token: admin })).body.items[0].id as string;
}, 60_000);

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
});

it('marks a deprecated operation, and changes nothing for calls that use no deprecated element', async () => {
  const order = (await retiring('POST', '/v1/orders', { token: customer, body: { items: [{ productId, quantity: 1 }] } })).body;
  const item = await retiring('GET', `/v1/order-items/${order.items[0].id}`, { token: customer });
  expect(item.status).toBe(200);
  expect(item.headers.get('deprecation')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
  expect(item.headers.get('sunset')).toBe('Thu, 01 Jan 2099 00:00:00 GMT');
  expect(item.headers.get('link')).toBe(`<${notice}order-items>; rel="deprecation"; type="text/html"`);

  // The same calls without the deprecated parts: the same answers as the stack's own gateway, no deprecation header.
  for (const target of ['/v1/products?size=2', `/v1/orders/${order.id}`, `/v1/orders/${order.id}/items`]) {
    const [plain, viaRetiring] = await Promise.all([stack('GET', target, { token: customer }), retiring('GET', target, { token: customer })]);
    expect([viaRetiring.status, deprecationHeadersOf(viaRetiring)]).toEqual([200, []]);
    expect(viaRetiring.body).toEqual(plain.body);
  }
  expect(deprecationHeadersOf(await stack('GET', `/v1/order-items/${order.items[0].id}`, { token: customer }))).toEqual([]);
});

it('refuses a parameter in its brownout with 410 GONE in the error format, naming the replacement, with Sunset and Link', async () => {
  const res = await retiring('GET', '/v1/products?maxPrice=5000', { token: customer });
  expect(res.status).toBe(410);
  expect(res.body).toEqual({ code: 'GONE', message: expect.stringContaining('use GET /v1/products query.priceAtMost instead'), traceId: expect.any(String), errors: [] });
  expect(res.body.message).toContain('It stops working on 2099-06-01');
  expect(res.headers.get('sunset')).toBe('Mon, 01 Jun 2099 00:00:00 GMT');
  expect(res.headers.get('link')).toBe(`<${notice}max-price>; rel="deprecation"; type="text/html"`);
  expect(await counted('rest:GET /v1/products query.maxPrice', 'brownout')).toBe(1);
  const line = gateway.output.map((text) => JSON.parse(text) as Record<string, unknown>).find((log) => (log.deprecation as { outcome?: string } | undefined)?.outcome === 'brownout');
  expect(line).toMatchObject({ msg: 'deprecated element refused (brownout)', deprecation: { element: 'rest:GET /v1/products query.maxPrice' }, caller: expect.stringMatching(/^user:/) });
});

it('refuses a request body field in its brownout; the order without it is placed', async () => {
  const refused = await retiring('POST', '/v1/orders', { token: customer, body: { items: [{ productId, quantity: 1 }], couponCode: 'WELCOME10' } });
  expect([refused.status, refused.body.code]).toEqual([410, 'GONE']);
  const placed = await retiring('POST', '/v1/orders', { token: customer, body: { items: [{ productId, quantity: 1 }] } });
  expect([placed.status, deprecationHeadersOf(placed)]).toEqual([201, []]);
});

it('passes a call in a dry-run window and counts and logs who would have been hit', async () => {
  const res = await retiring('GET', '/v1/products?minPrice=1', { token: customer });
  expect(res.status).toBe(200);
  expect(res.body.items.length).toBeGreaterThan(0);
  expect(res.headers.get('deprecation')).toBe(`@${Date.parse('2026-06-01T00:00:00Z') / 1000}`);
  expect(await counted('rest:GET /v1/products query.minPrice', 'dry_run')).toBe(1);
  expect(gateway.output.some((text) => text.includes('"outcome":"dry_run"') && text.includes('rest:GET /v1/products query.minPrice'))).toBe(true);
});

it('answers 410 GONE for a parameter after its sunset', async () => {
  const res = await retiring('GET', '/v1/products?q=lamp', { token: customer });
  expect(res.status).toBe(410);
  expect(res.body.message).toBe(`GET /v1/products query.q was retired on 2021-01-01: use POST /v1/products/search instead. See ${notice}q.`);
  expect(res.headers.get('sunset')).toBe('Fri, 01 Jan 2021 00:00:00 GMT');
  expect(Date.parse(res.headers.get('sunset') ?? '')).toBeGreaterThanOrEqual(Number(res.headers.get('deprecation')?.slice(1)) * 1000);
});

it('names a deprecated response field in Deprecated-Fields and leaves out one in its brownout; GraphQL answers it null with GONE at its path', async () => {
  const order = (await retiring('POST', '/v1/orders', { token: customer, body: { items: [{ productId, quantity: 1 }] } })).body;
  expect((await stack('PATCH', `/v1/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } })).status).toBe(200);
  expect((await stack('PUT', `/v1/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'CJ', trackingNumber: 'T-1' } })).status).toBe(200);

  const direct = await stack('GET', `/v1/orders/${order.id}/shipment`, { token: customer });
  expect(direct.body).toMatchObject({ carrier: 'CJ', trackingNumber: 'T-1' });
  const shipment = await retiring('GET', `/v1/orders/${order.id}/shipment`, { token: customer });
  expect(shipment.status).toBe(200);
  const { carrier: _carrier, ...withoutCarrier } = direct.body;
  expect(shipment.body).toEqual(withoutCarrier);
  expect(shipment.headers.get('deprecated-fields')).toBe('trackingNumber');
  expect(shipment.headers.get('link')).toBe(`<${notice}tracking-number>; rel="deprecation"; type="text/html", <${notice}carrier>; rel="deprecation"; type="text/html"`);

  const query = 'query Track($id: ID!) { order(id: $id) { id shipment { ...Tracking } } } fragment Tracking on Shipment { status trackingNumber }';
  const graphql = await retiring('POST', '/v1/graphql', { token: customer, body: { query, variables: { id: order.id } } });
  expect(graphql.status).toBe(200);
  // The field is left out as GraphQL leaves out a field that failed: null, its error at its path, the rest answered.
  expect(graphql.body.data).toEqual({ order: { id: order.id, shipment: { status: 'SHIPPED', trackingNumber: null } } });
  expect(graphql.body.errors).toEqual([{ message: expect.stringContaining('use Shipment.trackingUrl instead'), path: ['order', 'shipment', 'trackingNumber'], extensions: { code: 'GONE' } }]);
  expect(graphql.headers.get('link')).toBe(`<${notice}tracking-number>; rel="deprecation"; type="text/html"`);
  const without = await retiring('POST', '/v1/graphql', { token: customer, body: { query: 'query Track($id: ID!) { order(id: $id) { id shipment { status } } }', variables: { id: order.id } } });
  expect(without.body.data.order.shipment.status).toBe('SHIPPED');
  expect(deprecationHeadersOf(without)).toEqual([]);
});

it('does not start on a malformed registry, and says why in one log line', async () => {
  const broken = startGateway(registryFile('deprecations:\n  - element: "rest:GET /v1/products query.q"\n    replacement: "none"\n    announced: 2026-01-01\n    notice: https://docs.example.com/n\n'));
  expect(await broken.exited).toBe(1);
  const line = broken.output.map((text) => JSON.parse(text) as Record<string, unknown>).find((log) => log.msg === 'invalid configuration: the process cannot start');
  expect(line).toMatchObject({ problems: [{ variable: 'DEPRECATIONS_FILE', problem: expect.stringContaining('no sunset date (YYYY-MM-DD)') }] });
});
