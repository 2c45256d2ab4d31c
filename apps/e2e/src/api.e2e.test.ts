// The public API, end to end, through the gateway only: every endpoint of the spec's tables,
// the status codes the API produces, paging, ownership, limits, versions, GraphQL. The last
// block stops a service to see the gateway answer for it.
import { apiClient } from '@platform/test-kit';
import { ADMIN, STOCKED_PRODUCTS, gatewayUrl } from './stack';

const call = apiClient(() => gatewayUrl);
let seq = 0;

async function signUp(extra: Record<string, unknown> = {}) {
  seq += 1;
  const email = `e2e-${Date.now()}-${seq}@example.com`;
  const res = await call('POST', '/v1/users', { body: { name: `E2E User ${seq}`, email, password: 'e2e-password-1', ...extra } });
  expect(res.status).toBe(201);
  const token = await call('POST', '/v1/tokens', { body: { email, password: 'e2e-password-1' } });
  expect(token.status).toBe(200);
  return { user: res.body, email, token: token.body.accessToken as string };
}

let admin: string;
let products: { id: string; name: string; imageUrl: string; price: number }[];

beforeAll(async () => {
  const res = await call('POST', '/v1/tokens', { body: ADMIN });
  expect(res.status).toBe(200);
  admin = res.body.accessToken;
  products = (await call('GET', STOCKED_PRODUCTS, { token: admin })).body.items;
  expect(products.length).toBeGreaterThanOrEqual(20);
});

describe('users', () => {
  it('signs up (201 + Location), signs in, reads /users/me and /users/{id}', async () => {
    const { user, token } = await signUp({ nickname: 'e2e' });
    expect(user.role).toBe('customer');
    const me = await call('GET', '/v1/users/me', { token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(user.id);
    const byId = await call('GET', `/v1/users/${user.id}`, { token });
    expect(byId.body).toEqual(me.body);
    expect(byId.headers.get('etag')).toBe('"1"');
    expect(byId.headers.get('x-request-id')).toMatch(/^[\da-f]{32}$/);
  });

  it('PATCH changes sent fields, PUT clears the rest, If-Match guards both (412)', async () => {
    const { user, token, email } = await signUp({ nickname: 'keep', phone: '010-1234-5678' });
    const patched = await call('PATCH', `/v1/users/${user.id}`, { token, body: { name: 'Renamed' } });
    expect(patched.body).toMatchObject({ name: 'Renamed', nickname: 'keep', phone: '010-1234-5678' });
    expect((await call('PUT', `/v1/users/${user.id}`, { token, body: { name: 'Whole', email }, headers: { 'if-match': '"1"' } })).status).toBe(412);
    const replaced = await call('PUT', `/v1/users/${user.id}`, { token, body: { name: 'Whole', email }, headers: { 'if-match': '"2"' } });
    expect(replaced.body).toMatchObject({ name: 'Whole', nickname: null, phone: null });
  });

  it('lists users for admins only (403 for customers) and deletes (204, then 404)', async () => {
    const { user, token } = await signUp();
    expect((await call('GET', '/v1/users', { token })).status).toBe(403);
    const list = await call('GET', `/v1/users?email=${encodeURIComponent(user.email)}`, { token: admin });
    expect(list.body.items.map((u: { id: string }) => u.id)).toEqual([user.id]);
    const deleted = await call('DELETE', `/v1/users/${user.id}`, { token: admin });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', `/v1/users/${user.id}`, { token: admin })).status).toBe(404);
  });

  it('hides another customer behind 404 and answers 409 EMAIL_TAKEN', async () => {
    const alice = await signUp();
    const bob = await signUp();
    expect((await call('GET', `/v1/users/${bob.user.id}`, { token: alice.token })).status).toBe(404);
    const taken = await call('POST', '/v1/users', { body: { name: 'Dup', email: alice.email.toUpperCase(), password: 'e2e-password-1' } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('EMAIL_TAKEN');
  });
});

describe('products, ratings and reviews', () => {
  it('reads a product, reviews it once (409 on the second) and sees the rating move', async () => {
    const { token } = await signUp();
    const product = products[3];
    expect((await call('GET', `/v1/products/${product.id}`, { token })).body.name).toBe(product.name);
    const review = await call('POST', `/v1/products/${product.id}/reviews`, { token, body: { rating: 4, title: 'Solid' } });
    expect(review.status).toBe(201);
    expect((await call('POST', `/v1/products/${product.id}/reviews`, { token, body: { rating: 5 } })).body.code).toBe('REVIEW_EXISTS');
    const rating = await call('GET', `/v1/products/${product.id}/rating`, { token });
    expect(rating.body).toMatchObject({ productId: product.id, count: expect.any(Number), distribution: expect.objectContaining({ '4': expect.any(Number) }) });
    expect(rating.body.count).toBeGreaterThanOrEqual(1);
    expect((await call('GET', `/v1/products/${product.id}/reviews`, { token })).body.items.length).toBeGreaterThanOrEqual(1);
  });

  it('walks the whole catalog with cursors and caps size at 100', async () => {
    const { token } = await signUp();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const next: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await call('GET', `/v1/products?size=7&sort=price,asc${next}`, { token });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((p: { id: string }) => p.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe((await call('GET', '/v1/products?withTotal=true&size=1', { token })).body.totalCount);
    expect((await call('GET', '/v1/products?size=1000', { token })).body.items.length).toBeLessThanOrEqual(100);
  });

  it('answers 403 to a customer creating a product', async () => {
    const { token } = await signUp();
    expect((await call('POST', '/v1/products', { token, body: { sku: 'E2E-1', name: 'x', price: 1 } })).status).toBe(403);
  });
});

describe('orders', () => {
  it('places an order (201 + Location), reads it with amountDetail, lists, searches and reads items', async () => {
    const { token, user } = await signUp();
    const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[0].id, quantity: 2 }, { productId: products[1].id, quantity: 1 }], couponCode: 'E2E-COUPON' } });
    expect(placed.status).toBe(201);
    expect(placed.headers.get('location')).toBe(`/v1/orders/${placed.body.id}`);
    expect(placed.body).toMatchObject({ status: 'PENDING', userId: user.id, amount: products[0].price * 2 + products[1].price, hasCoupon: true });
    const read = await call('GET', `/v1/orders/${placed.body.id}?include=amountDetail`, { token });
    expect(read.body.amountDetail.total).toBe(placed.body.amount);
    const list = await call('GET', '/v1/orders?hasCoupon=true&withTotal=true', { token });
    expect(list.body).toMatchObject({ totalCount: 1, hasNext: false, nextCursor: null });
    const search = await call('POST', '/v1/orders/search', { token, body: { ids: [placed.body.id], status: ['PENDING'] } });
    expect(search.body.items.map((o: { id: string }) => o.id)).toEqual([placed.body.id]);
    const items = await call('GET', `/v1/orders/${placed.body.id}/items`, { token });
    expect(items.body.items).toHaveLength(2);
    const item = await call('GET', `/v1/order-items/${items.body.items[0].id}`, { token });
    expect(item.body).toEqual(items.body.items[0]);
    expect(item.headers.get('deprecation')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
    expect(item.headers.get('sunset')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
    expect(item.headers.get('link')).toContain('rel="deprecation"');
  });

  it('replaces a PENDING order (PUT), cancels it (PATCH), refuses a second cancel (409) and deletes it (204)', async () => {
    const { token } = await signUp();
    const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[2].id, quantity: 1 }] } });
    const replaced = await call('PUT', `/v1/orders/${placed.body.id}`, { token, body: { items: [{ productId: products[4].id, quantity: 3 }] } });
    expect(replaced.body).toMatchObject({ amount: products[4].price * 3, productId: products[4].id });
    const canceled = await call('PATCH', `/v1/orders/${placed.body.id}`, { token, body: { status: 'CANCELED' } });
    expect(canceled.body.status).toBe('CANCELED');
    const again = await call('PATCH', `/v1/orders/${placed.body.id}`, { token, body: { status: 'CANCELED' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ORDER_ALREADY_CANCELED');
    expect((await call('DELETE', `/v1/orders/${placed.body.id}`, { token })).status).toBe(204);
    expect((await call('DELETE', `/v1/orders/${placed.body.id}`, { token })).status).toBe(404);
  });

  it('ships (admin) and then refuses cancellation with 409 ORDER_NOT_CANCELABLE; reads the shipment', async () => {
    const { token } = await signUp();
    const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[5].id, quantity: 1 }] } });
    await call('PATCH', `/v1/orders/${placed.body.id}`, { token: admin, body: { status: 'CONFIRMED' } });
    expect((await call('PUT', `/v1/orders/${placed.body.id}/shipment`, { token, body: { status: 'SHIPPED' } })).status).toBe(403);
    const shipped = await call('PUT', `/v1/orders/${placed.body.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'CJ', trackingNumber: 'T-1' } });
    expect(shipped.body).toMatchObject({ status: 'SHIPPED', carrier: 'CJ' });
    expect((await call('GET', `/v1/orders/${placed.body.id}/shipment`, { token })).body.status).toBe('SHIPPED');
    const cancel = await call('PATCH', `/v1/orders/${placed.body.id}`, { token, body: { status: 'CANCELED' } });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('ORDER_NOT_CANCELABLE');
  });

  it('accepts a cancellation (202 + Location) that completes in the background', async () => {
    const { token } = await signUp();
    const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[6].id, quantity: 1 }] } });
    const accepted = await call('POST', `/v1/orders/${placed.body.id}/cancellation`, { token, body: { reason: 'e2e' } });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('location')).toBe(`/v1/orders/${placed.body.id}/cancellation`);
    let status = accepted.body.status;
    for (let i = 0; i < 50 && status !== 'COMPLETED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await call('GET', accepted.headers.get('location')!, { token })).body.status;
    }
    expect(status).toBe('COMPLETED');
    expect((await call('GET', `/v1/orders/${placed.body.id}`, { token })).body.status).toBe('CANCELED');
  });

  it('replays an Idempotency-Key and answers 409 OUT_OF_STOCK for more than is stocked', async () => {
    const { token } = await signUp();
    const body = { items: [{ productId: products[7].id, quantity: 1 }] };
    const first = await call('POST', '/v1/orders', { token, body, headers: { 'idempotency-key': 'e2e-key-1' } });
    const replay = await call('POST', '/v1/orders', { token, body, headers: { 'idempotency-key': 'e2e-key-1' } });
    expect(replay.body.id).toBe(first.body.id);
    expect((await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[7].id, quantity: 2 }] }, headers: { 'idempotency-key': 'e2e-key-1' } })).status).toBe(422);
    const greedy = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[8].id, quantity: 1000 }] } });
    expect(greedy.status).toBe(409);
    expect(greedy.body.code).toBe('OUT_OF_STOCK');
  });

  it("hides another customer's order (404) and refuses a customer naming another user (403)", async () => {
    const alice = await signUp();
    const bob = await signUp();
    const placed = await call('POST', '/v1/orders', { token: alice.token, body: { items: [{ productId: products[9].id, quantity: 1 }] } });
    for (const suffix of ['', '/items', '/shipment']) expect((await call('GET', `/v1/orders/${placed.body.id}${suffix}`, { token: bob.token })).status).toBe(404);
    expect((await call('GET', `/v1/orders?userId=${alice.user.id}`, { token: bob.token })).status).toBe(403);
    expect((await call('GET', `/v1/orders?userId=${alice.user.id}&withTotal=true`, { token: admin })).body.totalCount).toBe(1);
  });
});

describe('the status codes the API answers with', () => {
  it('400 for unreadable input, 422 for broken rules, both listing every field', async () => {
    const { token } = await signUp();
    const unknownField = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[0].id, quantity: 1 }], amount: 5 } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.errors[0]).toMatchObject({ field: 'amount', code: 'UNKNOWN_FIELD' });
    const malformed = await call('POST', '/v1/orders', { token, body: '{"items": [' });
    expect(malformed.body.code).toBe('MALFORMED_JSON');
    const rules = await call('POST', '/v1/users', { body: { name: 'x', email: 'nope', password: 'short' } });
    expect(rules.status).toBe(422);
    expect(rules.body.errors.map((e: { field: string }) => e.field)).toEqual(['email', 'password']);
    expect((await call('GET', '/v1/orders?sort=secret', { token })).status).toBe(400);
    expect((await call('GET', '/v1/orders?cursor=forged.cursor', { token })).body.code).toBe('INVALID_CURSOR');
    expect((await call('GET', '/v1/orders?bogus=1', { token })).body.errors[0].code).toBe('UNKNOWN_PARAMETER');
  });

  it('401, 404 (unknown path, unknown version), 405, 406, 413, 415, and problem+json on request', async () => {
    const { token } = await signUp();
    const anonymous = await call('GET', '/v1/orders');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect((await call('GET', '/v2/orders', { token })).body.code).toBe('UNSUPPORTED_VERSION');
    expect((await call('GET', '/v1/nowhere', { token })).status).toBe(404);
    expect((await call('PATCH', '/v1/products', { token, body: {} })).headers.get('allow')).toBe('GET, POST, HEAD');
    expect((await call('GET', '/v1/orders', { token, headers: { accept: 'text/html' } })).status).toBe(406);
    expect((await call('POST', '/v1/orders', { token, body: JSON.stringify({ x: 'y'.repeat(1_100_000) }) })).status).toBe(413);
    expect((await call('POST', '/v1/orders', { token, body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
    const problem = await call('GET', '/v1/orders/01a20097-b6ee-740a-909d-9896572adaa7', { token, headers: { accept: 'application/problem+json' } });
    expect(problem.status).toBe(404);
    expect(problem.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(problem.body).toMatchObject({ type: expect.any(String), title: 'Not found', status: 404, detail: expect.any(String), instance: '/v1/orders/01a20097-b6ee-740a-909d-9896572adaa7', code: 'NOT_FOUND', traceId: expect.any(String), errors: [] });
  });

  it('429 RATE_LIMITED with Retry-After and RateLimit headers after too many sign-in attempts for one email', async () => {
    const { email } = await signUp();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await call('POST', '/v1/tokens', { body: { email, password: 'wrong-password' } });
      statuses.push(last.status);
      expect(last.headers.get('ratelimit-policy')).toBe('"tokens";q=5;w=60');
    }
    // The sign-up's own token request spent one of the five.
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    expect(last!.body.code).toBe('RATE_LIMITED');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('ratelimit')).toMatch(/^"tokens";r=0;t=\d+$/);
  });
});

describe('GraphQL through the gateway', () => {
  it('answers order(id) across three subgraphs with exactly the requested fields', async () => {
    const { token, user } = await signUp();
    const product = products[10];
    const placed = await call('POST', '/v1/orders', { token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    const query = `query($id: ID!) { order(id: $id) { id amount user { name } product { name imageUrl rating } shipment { status } reviewCount } }`;
    const res = await call('POST', '/v1/graphql', { token, body: { query, variables: { id: placed.body.id } } });
    expect(res.status).toBe(200);
    const rating = (await call('GET', `/v1/products/${product.id}`, { token })).body;
    expect(res.body).toEqual({
      data: { order: { id: placed.body.id, amount: product.price, user: { name: user.name }, product: { name: product.name, imageUrl: product.imageUrl, rating: rating.rating }, shipment: { status: 'PREPARING' }, reviewCount: rating.reviewCount } },
      extensions: { cost: { requested: 16, limit: 5_000 } },
    });
  });

  it('answers orders(first){id user{name}} and hides another customer\'s order as null + NOT_FOUND (HTTP 200)', async () => {
    const alice = await signUp();
    const bob = await signUp();
    const placed = await call('POST', '/v1/orders', { token: alice.token, body: { items: [{ productId: products[11].id, quantity: 1 }] } });
    const mine = await call('POST', '/graphql', { token: alice.token, body: { query: '{ orders(first: 5) { id user { name } } }' } });
    expect(mine.body).toEqual({ data: { orders: [{ id: placed.body.id, user: { name: alice.user.name } }] }, extensions: { cost: { requested: 2 + 5 * (1 + 2 + 1), limit: 5_000 } } });
    const hidden = await call('POST', '/v1/graphql', { token: bob.token, body: { query: `{ order(id: "${placed.body.id}") { id } }` } });
    expect(hidden.status).toBe(200);
    expect(hidden.body.data.order).toBeNull();
    expect(hidden.body.errors[0]).toMatchObject({ path: ['order'], extensions: { code: 'NOT_FOUND' } });
  });
});

