// The OWASP API Security Top 10 (2023), item by item, against the whole stack through the
// gateway, as an attacker holding an ordinary customer account would try it.
// API10 (unsafe consumption of upstream APIs) is the gateway's own: apps/gateway/src/gateway.test.ts
// proves a service's raw 5xx text never reaches a client.
import { request as httpRequest } from 'node:http';
import { SignJWT, UnsecuredJWT } from 'jose';
import { apiClient } from '@platform/test-kit';
import { STOCKED_PRODUCTS, gatewayUrl, stackState } from '../stack';
import { useContract } from '../contract';

const call = apiClient(() => gatewayUrl, useContract(__filename, 'documented').onResponse);
let admin: string;
let productId: string;

async function customer() {
  const email = `owasp-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call('POST', '/v1/users', { body: { name: 'Owasp', email, password: 'owasp-password-1' } });
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'owasp-password-1' } })).body.accessToken as string;
  return { id: created.body.id as string, email, token };
}

beforeAll(async () => {
  admin = stackState().adminToken;
  productId = (await call('GET', STOCKED_PRODUCTS, { token: admin })).body.items[0].id;
});

describe('API1 broken object level authorization', () => {
  it("hides another customer's user, order, items and shipment behind 404, in REST and GraphQL", async () => {
    const [alice, mallory] = [await customer(), await customer()];
    const order = (await call('POST', '/v1/orders', { token: alice.token, body: { items: [{ productId, quantity: 1 }] } })).body;
    for (const path of [`/v1/users/${alice.id}`, `/v1/orders/${order.id}`, `/v1/orders/${order.id}/items`, `/v1/orders/${order.id}/shipment`, `/v1/order-items/${order.items[0].id}`]) {
      expect([path, (await call('GET', path, { token: mallory.token })).status]).toEqual([path, 404]);
    }
    expect((await call('PATCH', `/v1/orders/${order.id}`, { token: mallory.token, body: { status: 'CANCELED' } })).status).toBe(404);
    const graph = await call('POST', '/v1/graphql', { token: mallory.token, body: { query: `{ order(id: "${order.id}") { id amount } }` } });
    expect([graph.body.data.order, graph.body.errors[0].extensions.code]).toEqual([null, 'NOT_FOUND']);
  });
});

describe('API2 broken authentication', () => {
  it('refuses unsigned, wrongly signed and expired tokens with 401 and WWW-Authenticate', async () => {
    const { id } = await customer();
    const claims = { role: 'admin', sub: id, iss: 'order-platform', aud: 'order-platform-api' };
    const unsigned = new UnsecuredJWT(claims).setExpirationTime('1h').encode();
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode('not-the-secret-not-the-secret-not-the-secret'));
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(new TextEncoder().encode(process.env.E2E_JWT_SECRET ?? ''));
    for (const token of [unsigned, forged, expired, 'garbage']) {
      const res = await call('GET', '/v1/users', { token });
      expect([res.status, res.body.code, res.headers.get('www-authenticate')]).toEqual([401, 'UNAUTHENTICATED', 'Bearer']);
    }
  });

  it('limits password guessing per email, whatever JSON media type the request claims', async () => {
    const { email } = await customer();
    const statuses: number[] = [];
    for (const type of ['application/json', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json', 'application/json', 'application/json', 'application/json']) {
      statuses.push((await call('POST', '/v1/tokens', { body: JSON.stringify({ email, password: 'wrong-guess-123' }), headers: { 'content-type': type } })).status);
    }
    // One token was issued to sign up; the e2e stack allows five requests per email and window.
    expect(statuses.slice(-3)).toEqual([429, 429, 429]);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  });
});

describe('API3 broken object property level authorization', () => {
  it('refuses fields a client may not set, and never sends a password or its hash', async () => {
    const email = `mass-${Date.now()}@example.com`;
    const promoted = await call('POST', '/v1/users', { body: { name: 'Mass', email, password: 'mass-password-1', role: 'admin' } });
    expect([promoted.status, promoted.body.errors[0]]).toEqual([400, expect.objectContaining({ field: 'role', code: 'UNKNOWN_FIELD' })]);
    const { token, id } = await customer();
    const priced = await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }], amount: 1 } });
    expect([priced.status, priced.body.errors[0]]).toEqual([400, expect.objectContaining({ field: 'amount', code: 'UNKNOWN_FIELD' })]);
    const me = await call('GET', `/v1/users/${id}`, { token });
    expect(me.text).not.toMatch(/password/i);
    expect(me.body.role).toBe('customer');
  });
});

describe('API4 unrestricted resource consumption', () => {
  it('caps page sizes, refuses bodies over 1 MiB and GraphQL documents over the depth limit', async () => {
    const { token } = await customer();
    expect((await call('GET', '/v1/products?size=1000', { token })).body.items.length).toBeLessThanOrEqual(100);
    const huge = await call('POST', '/v1/orders', { token, body: JSON.stringify({ items: [], pad: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } });
    expect([huge.status, huge.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const deep = `{ orders(first: 1) { ${'user { id '.repeat(12)}${'}'.repeat(12)} } }`;
    const graph = await call('POST', '/v1/graphql', { token, body: { query: deep } });
    expect(graph.status).toBeLessThan(500);
    expect(graph.body.data?.orders).toBeUndefined();
  });
});

describe('API4 unrestricted resource consumption: one request, many writes; one client, many addresses', () => {
  const aliasedOrders = (count: number) => `mutation { ${Array.from({ length: count }, (_, i) => `o${i}: createOrder(input: {items: [{productId: "${productId}", quantity: 1}]}) { id }`).join(' ')} }`;
  const remainingOf = (header: string | null) => Number(/;r=(\d+);/.exec(header ?? '')?.[1]);

  it('runs at most 5 mutation fields per GraphQL request and charges each a point, as REST would', async () => {
    const { token } = await customer();
    const aliased = await call('POST', '/v1/graphql', { token, body: { query: aliasedOrders(16) } });
    expect(aliased.body.data).toBeUndefined();
    expect(aliased.body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toContain('MUTATION_LIMIT_EXCEEDED');
    expect((await call('GET', '/v1/orders', { token })).body.items).toHaveLength(0);
    const before = remainingOf((await call('GET', '/v1/orders', { token })).headers.get('ratelimit'));
    const three = await call('POST', '/v1/graphql', { token, body: { query: aliasedOrders(3) } });
    expect(Object.values(three.body.data ?? {}).filter(Boolean)).toHaveLength(3);
    expect(remainingOf(three.headers.get('ratelimit'))).toBe(before - 3);
  });

  it('believes no X-Forwarded-For from a client that is not the trusted proxy: spoofed addresses share one budget', async () => {
    // The e2e gateway trusts 127.0.0.1 (TRUST_PROXY); this client calls from 127.0.0.9.
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      remaining.push(
        await new Promise<number>((resolve, reject) => {
          const req = httpRequest(`${gatewayUrl}/v1/openapi.json`, { localAddress: '127.0.0.9', agent: false, headers: { accept: 'application/json', 'x-forwarded-for': `198.51.100.${i}` } }, (res) => {
            res.resume();
            res.on('end', () => resolve(remainingOf(String(res.headers.ratelimit ?? ''))));
          });
          req.on('error', reject);
          req.end();
        }),
      );
    }
    expect(remaining.map((left) => remaining[0] - left)).toEqual([0, 1, 2, 3]);
  });
});

describe('API5 broken function level authorization', () => {
  it('answers 403 to a customer on every admin-only function', async () => {
    const { token } = await customer();
    const order = (await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] } })).body;
    const attempts: [string, string, unknown][] = [
      ['GET', '/v1/users', undefined],
      ['POST', '/v1/products', { name: 'x' }],
      ['DELETE', `/v1/products/${productId}`, undefined],
      ['PUT', `/v1/orders/${order.id}/shipment`, { status: 'SHIPPED' }],
      ['PATCH', `/v1/orders/${order.id}`, { status: 'SHIPPED' }],
    ];
    for (const [method, path, body] of attempts) expect([method, path, (await call(method, path, { token, body })).status]).toEqual([method, path, 403]);
  });

  it('answers 403 before reading the body: unreadable or too deeply nested JSON from a customer changes nothing', async () => {
    const { token } = await customer();
    const order = (await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] } })).body;
    for (const body of ['{"name":', '['.repeat(65) + ']'.repeat(65)]) {
      for (const [method, path] of [['POST', '/v1/products'], ['PATCH', `/v1/products/${productId}`], ['PUT', `/v1/orders/${order.id}/shipment`]]) {
        const answer = await call(method, path, { token, body });
        expect([method, path, answer.status, answer.body?.code]).toEqual([method, path, 403, 'FORBIDDEN']);
      }
    }
  });
});

describe('API6 unrestricted access to sensitive business flows', () => {
  it('places one order for a retried Idempotency-Key, however often it is sent', async () => {
    const { token } = await customer();
    const key = `owasp-${Date.now()}`;
    const answers = await Promise.all([1, 2, 3].map(() => call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] }, headers: { 'idempotency-key': key } })));
    const ids = new Set(answers.filter((answer) => answer.status === 201).map((answer) => answer.body.id));
    expect(ids.size).toBe(1);
    expect((await call('GET', '/v1/orders', { token })).body.items).toHaveLength(1);
  });
});

describe('API7 server side request forgery', () => {
  it('stores a URL a client gives (a product image) without ever fetching it', async () => {
    const internal = 'http://169.254.169.254/latest/meta-data/';
    const created = await call('POST', '/v1/products', { token: admin, body: { name: 'SSRF probe', sku: `SSRF-${Date.now()}`, price: 1000, currency: 'KRW', imageUrl: internal } });
    expect([created.status, created.body.imageUrl]).toEqual([201, internal]);
    expect((await call('DELETE', `/v1/products/${created.body.id}`, { token: admin })).status).toBe(204);
  });
});

describe('API8 security misconfiguration', () => {
  it('sends nosniff and no-store on personal data, hides its stack, and offers no method it lacks', async () => {
    const { token, id } = await customer();
    const me = await call('GET', `/v1/users/${id}`, { token });
    expect(me.headers.get('x-content-type-options')).toBe('nosniff');
    expect(me.headers.get('cache-control')).toMatch(/no-store/);
    expect(me.headers.get('x-powered-by')).toBeNull();
    const options = await call('OPTIONS', '/v1/orders', { token });
    expect([options.status, options.headers.get('allow'), options.headers.get('access-control-allow-origin')]).toEqual([405, expect.stringContaining('GET'), null]);
  });
});

describe('API9 improper inventory management', () => {
  // Retiring elements are marked from the deprecation registry: deprecations.e2e.test.ts runs a
  // gateway with entries of its own and checks Deprecation, Sunset, Link and 410 after the sunset.
  it('serves one version, marks nothing that is not retiring, and routes nothing internal', async () => {
    const { token } = await customer();
    expect((await call('GET', '/v2/orders', { token })).body.code).toBe('UNSUPPORTED_VERSION');
    for (const path of ['/v1/internal/credentials/x', '/v1/metrics', '/metrics', '/v1/_service']) expect([path, (await call('GET', path, { token })).status]).toEqual([path, 404]);
    const current = await call('GET', '/v1/orders', { token });
    expect([current.status, current.headers.get('deprecation'), current.headers.get('sunset')]).toEqual([200, null, null]);
  });
});
