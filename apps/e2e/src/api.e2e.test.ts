// The public API, end to end, through the gateway only: every endpoint of the spec's tables,
// the status codes the API produces, paging, ownership, limits, versions, GraphQL. Calls go
// through the typed SDK (@platform/sdk) as a client's would; requests no typed client can send
// (broken JSON, wrong media types, unknown parameters) go through the raw test client. Every
// response of both is checked against the published contract.
import { type ApiClient, createApiClient, type Schemas } from '@platform/sdk';
import { apiClient } from '@platform/test-kit';
import { connect } from 'node:net';
import { answersIn } from './campaign/fuzz';
import { useContract } from './contract';
import { ADMIN, gatewayUrl } from './stack';

const contract = useContract(__filename);
const call = apiClient(() => gatewayUrl, contract.onResponse);
const anonymous = createApiClient(gatewayUrl, { middleware: [contract.middleware] });
const clientFor = (token: string): ApiClient => createApiClient(gatewayUrl, { token, middleware: [contract.middleware] });
let seq = 0;

/** The body of a success, or the failure that came instead (so a test fails with the reason). */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`expected a success, got ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

/** The error body of a failure, with its status. */
function failed<E>(result: { data?: unknown; error?: E; response: Response }): { status: number; error: E } {
  if (result.error === undefined) throw new Error(`expected an error, got ${result.response.status}`);
  return { status: result.response.status, error: result.error };
}

async function signUp(extra: { nickname?: string; phone?: string } = {}) {
  seq += 1;
  const email = `e2e-${Date.now()}-${seq}@example.com`;
  const created = await anonymous.POST('/users', { body: { name: `E2E User ${seq}`, email, password: 'e2e-password-1', ...extra } });
  expect(created.response.status).toBe(201);
  const user = ok(created);
  const { accessToken: token } = ok(await anonymous.POST('/tokens', { body: { email, password: 'e2e-password-1' } }));
  return { user, email, token, api: clientFor(token) };
}

let admin: ApiClient;
let adminToken: string;
let products: Schemas['Product'][];

beforeAll(async () => {
  adminToken = ok(await anonymous.POST('/tokens', { body: ADMIN })).accessToken;
  admin = clientFor(adminToken);
  // The seeded demo catalog first, so every product on the page is stocked: the default order is
  // newest first, and suites create products of their own (unstocked) while others run.
  products = ok(await admin.GET('/products', { params: { query: { size: 100, sort: 'createdAt,asc' } } })).items;
  expect(products.length).toBeGreaterThanOrEqual(20);
});

describe('users', () => {
  it('signs up (201 + Location), signs in, reads /users/me and /users/{id}', async () => {
    const { user, api } = await signUp({ nickname: 'e2e' });
    expect(user.role).toBe('customer');
    const me = ok(await api.GET('/users/{id}', { params: { path: { id: 'me' } } }));
    expect(me.id).toBe(user.id);
    const byId = await api.GET('/users/{id}', { params: { path: { id: user.id } } });
    expect(ok(byId)).toEqual(me);
    expect(byId.response.headers.get('etag')).toBe('"1"');
    expect(byId.response.headers.get('x-request-id')).toMatch(/^[\da-f]{32}$/);
  });

  it('PATCH changes sent fields, PUT clears the rest, If-Match guards both (412)', async () => {
    const { user, api, email } = await signUp({ nickname: 'keep', phone: '010-1234-5678' });
    const path = { id: user.id };
    const patched = ok(await api.PATCH('/users/{id}', { params: { path }, body: { name: 'Renamed' } }));
    expect(patched).toMatchObject({ name: 'Renamed', nickname: 'keep', phone: '010-1234-5678' });
    expect(failed(await api.PUT('/users/{id}', { params: { path, header: { 'If-Match': '"1"' } }, body: { name: 'Whole', email } })).status).toBe(412);
    const replaced = ok(await api.PUT('/users/{id}', { params: { path, header: { 'If-Match': '"2"' } }, body: { name: 'Whole', email } }));
    expect(replaced).toMatchObject({ name: 'Whole', nickname: null, phone: null });
  });

  it('lists users for admins only (403 for customers) and deletes (204, then 404)', async () => {
    const { user, api } = await signUp();
    expect(failed(await api.GET('/users')).status).toBe(403);
    const list = ok(await admin.GET('/users', { params: { query: { email: user.email } } }));
    expect(list.items.map((u) => u.id)).toEqual([user.id]);
    const deleted = await admin.DELETE('/users/{id}', { params: { path: { id: user.id } } });
    expect(deleted.response.status).toBe(204);
    expect(await deleted.response.text()).toBe('');
    expect(failed(await admin.GET('/users/{id}', { params: { path: { id: user.id } } })).status).toBe(404);
  });

  it('hides another customer behind 404 and answers 409 EMAIL_TAKEN', async () => {
    const alice = await signUp();
    const bob = await signUp();
    expect(failed(await alice.api.GET('/users/{id}', { params: { path: { id: bob.user.id } } })).status).toBe(404);
    const taken = failed(await anonymous.POST('/users', { body: { name: 'Dup', email: alice.email.toUpperCase(), password: 'e2e-password-1' } }));
    expect(taken.status).toBe(409);
    expect(taken.error.code).toBe('EMAIL_TAKEN');
  });
});

describe('products, ratings and reviews', () => {
  it('reads a product, reviews it once (409 on the second) and sees the rating move', async () => {
    const { api } = await signUp();
    const product = products[3];
    const path = { id: product.id };
    expect(ok(await api.GET('/products/{id}', { params: { path } })).name).toBe(product.name);
    const review = await api.POST('/products/{id}/reviews', { params: { path }, body: { rating: 4, title: 'Solid' } });
    expect(review.response.status).toBe(201);
    expect(failed(await api.POST('/products/{id}/reviews', { params: { path }, body: { rating: 5 } })).error.code).toBe('REVIEW_EXISTS');
    const rating = ok(await api.GET('/products/{id}/rating', { params: { path } }));
    expect(rating).toMatchObject({ productId: product.id, count: expect.any(Number), distribution: expect.objectContaining({ '4': expect.any(Number) }) });
    expect(rating.count).toBeGreaterThanOrEqual(1);
    expect(ok(await api.GET('/products/{id}/reviews', { params: { path } })).items.length).toBeGreaterThanOrEqual(1);
  });

  it('walks the whole catalog with cursors and caps size at 100', async () => {
    const { api } = await signUp();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Schemas['ProductPage'] = ok(await api.GET('/products', { params: { query: { size: 7, sort: 'price,asc', ...(cursor ? { cursor } : {}) } } }));
      seen.push(...page.items.map((p) => p.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(ok(await api.GET('/products', { params: { query: { withTotal: true, size: 1 } } })).totalCount);
    // Past the documented maximum on purpose: the server serves 100, it does not refuse.
    expect((await call('GET', '/v1/products?size=1000', { token: adminToken })).body.items.length).toBeLessThanOrEqual(100);
  });

  it('answers 403 to a customer creating a product', async () => {
    const { api } = await signUp();
    expect(failed(await api.POST('/products', { body: { sku: 'E2E-1', name: 'x', price: 1 } })).status).toBe(403);
  });
});

describe('orders', () => {
  it('places an order (201 + Location + ETag), reads it with amountDetail, lists, searches and reads items', async () => {
    const { api, user } = await signUp();
    const placed = await api.POST('/orders', { body: { items: [{ productId: products[0].id, quantity: 2 }, { productId: products[1].id, quantity: 1 }], couponCode: 'E2E-COUPON' } });
    expect(placed.response.status).toBe(201);
    const order = ok(placed);
    expect(placed.response.headers.get('location')).toBe(`/v1/orders/${order.id}`);
    expect(placed.response.headers.get('etag')).toBe('"1"');
    expect(order).toMatchObject({ status: 'PENDING', userId: user.id, amount: products[0].price * 2 + products[1].price, hasCoupon: true });
    const read = await api.GET('/orders/{id}', { params: { path: { id: order.id }, query: { include: ['amountDetail'] } } });
    expect(ok(read).amountDetail?.total).toBe(order.amount);
    expect(read.response.headers.get('etag')).toBe(placed.response.headers.get('etag'));
    const list = ok(await api.GET('/orders', { params: { query: { hasCoupon: true, withTotal: true } } }));
    expect(list).toMatchObject({ totalCount: 1, hasNext: false, nextCursor: null });
    const search = ok(await api.POST('/orders/search', { body: { ids: [order.id], status: ['PENDING'] } }));
    expect(search.items.map((o) => o.id)).toEqual([order.id]);
    const items = ok(await api.GET('/orders/{id}/items', { params: { path: { id: order.id } } }));
    expect(items.items).toHaveLength(2);
    const item = await api.GET('/order-items/{id}', { params: { path: { id: items.items[0].id } } });
    expect(ok(item)).toEqual(items.items[0]);
    // Nothing is deprecated in the repository's registry: no deprecation header (deprecations.e2e.test.ts runs a registry of its own).
    expect([item.response.headers.get('deprecation'), item.response.headers.get('sunset'), item.response.headers.get('link')]).toEqual([null, null, null]);
  });

  it('filters a list by a comma-separated status list', async () => {
    const { api } = await signUp();
    const placed = ok(await api.POST('/orders', { body: { items: [{ productId: products[12].id, quantity: 1 }] } }));
    expect(ok(await api.GET('/orders', { params: { query: { status: ['CONFIRMED', 'PENDING'] } } })).items.map((o) => o.id)).toEqual([placed.id]);
    expect(ok(await api.GET('/orders', { params: { query: { status: ['CANCELED', 'SHIPPED'] } } })).items).toEqual([]);
  });

  it('replaces a PENDING order (PUT), cancels it (PATCH), refuses a second cancel (409) and deletes it (204)', async () => {
    const { api } = await signUp();
    const path = { id: ok(await api.POST('/orders', { body: { items: [{ productId: products[2].id, quantity: 1 }] } })).id };
    const replaced = ok(await api.PUT('/orders/{id}', { params: { path }, body: { items: [{ productId: products[4].id, quantity: 3 }] } }));
    expect(replaced).toMatchObject({ amount: products[4].price * 3, productId: products[4].id });
    const canceled = ok(await api.PATCH('/orders/{id}', { params: { path }, body: { status: 'CANCELED' } }));
    expect(canceled.status).toBe('CANCELED');
    const again = failed(await api.PATCH('/orders/{id}', { params: { path }, body: { status: 'CANCELED' } }));
    expect(again.status).toBe(409);
    expect(again.error.code).toBe('ORDER_ALREADY_CANCELED');
    expect((await api.DELETE('/orders/{id}', { params: { path } })).response.status).toBe(204);
    expect(failed(await api.DELETE('/orders/{id}', { params: { path } })).status).toBe(404);
  });

  it('ships (admin) and then refuses cancellation with 409 ORDER_NOT_CANCELABLE; reads the shipment', async () => {
    const { api } = await signUp();
    const path = { id: ok(await api.POST('/orders', { body: { items: [{ productId: products[5].id, quantity: 1 }] } })).id };
    ok(await admin.PATCH('/orders/{id}', { params: { path }, body: { status: 'CONFIRMED' } }));
    expect(failed(await api.PUT('/orders/{id}/shipment', { params: { path }, body: { status: 'SHIPPED' } })).status).toBe(403);
    const shipped = ok(await admin.PUT('/orders/{id}/shipment', { params: { path }, body: { status: 'SHIPPED', carrier: 'CJ', trackingNumber: 'T-1' } }));
    expect(shipped).toMatchObject({ status: 'SHIPPED', carrier: 'CJ' });
    expect(ok(await api.GET('/orders/{id}/shipment', { params: { path } })).status).toBe('SHIPPED');
    const cancel = failed(await api.PATCH('/orders/{id}', { params: { path }, body: { status: 'CANCELED' } }));
    expect(cancel.status).toBe(409);
    expect(cancel.error.code).toBe('ORDER_NOT_CANCELABLE');
  });

  it('accepts a cancellation (202 + Location) that completes in the background', async () => {
    const { api } = await signUp();
    const path = { id: ok(await api.POST('/orders', { body: { items: [{ productId: products[6].id, quantity: 1 }] } })).id };
    const accepted = await api.POST('/orders/{id}/cancellation', { params: { path }, body: { reason: 'e2e' } });
    expect(accepted.response.status).toBe(202);
    expect(accepted.response.headers.get('location')).toBe(`/v1/orders/${path.id}/cancellation`);
    let status = ok(accepted).status;
    for (let i = 0; i < 50 && status !== 'COMPLETED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = ok(await api.GET('/orders/{id}/cancellation', { params: { path } })).status;
    }
    expect(status).toBe('COMPLETED');
    expect(ok(await api.GET('/orders/{id}', { params: { path } })).status).toBe('CANCELED');
  });

  it('replays an Idempotency-Key (same body, same ETag) and answers 409 OUT_OF_STOCK for more than is stocked', async () => {
    const { api } = await signUp();
    const body = { items: [{ productId: products[7].id, quantity: 1 }] };
    const header = { 'Idempotency-Key': 'e2e-key-1' };
    const first = await api.POST('/orders', { params: { header }, body });
    const replay = await api.POST('/orders', { params: { header }, body });
    expect(ok(replay)).toEqual(ok(first));
    expect(replay.response.headers.get('etag')).toBe(first.response.headers.get('etag'));
    expect(failed(await api.POST('/orders', { params: { header }, body: { items: [{ productId: products[7].id, quantity: 2 }] } })).status).toBe(422);
    // The replayed ETag is the order's as placed: once the order changed, it no longer matches.
    ok(await api.PATCH('/orders/{id}', { params: { path: { id: ok(first).id } }, body: { couponCode: 'E2E-LATER' } }));
    const stale = replay.response.headers.get('etag') ?? '';
    expect(failed(await api.PATCH('/orders/{id}', { params: { path: { id: ok(first).id }, header: { 'If-Match': stale } }, body: { couponCode: null } })).status).toBe(412);
    const greedy = failed(await api.POST('/orders', { body: { items: [{ productId: products[8].id, quantity: 1000 }] } }));
    expect(greedy.status).toBe(409);
    expect(greedy.error.code).toBe('OUT_OF_STOCK');
  });

  it("hides another customer's order (404) and refuses a customer naming another user (403)", async () => {
    const alice = await signUp();
    const bob = await signUp();
    const path = { id: ok(await alice.api.POST('/orders', { body: { items: [{ productId: products[9].id, quantity: 1 }] } })).id };
    expect(failed(await bob.api.GET('/orders/{id}', { params: { path } })).status).toBe(404);
    expect(failed(await bob.api.GET('/orders/{id}/items', { params: { path } })).status).toBe(404);
    expect(failed(await bob.api.GET('/orders/{id}/shipment', { params: { path } })).status).toBe(404);
    expect(failed(await bob.api.GET('/orders', { params: { query: { userId: alice.user.id } } })).status).toBe(403);
    expect(ok(await admin.GET('/orders', { params: { query: { userId: alice.user.id, withTotal: true } } })).totalCount).toBe(1);
  });
});

describe('the status codes the API answers with', () => {
  it('400 for unreadable input, 422 for broken rules, both listing every field', async () => {
    const { api, token } = await signUp();
    // Requests the typed client refuses to build go through the raw client.
    const unknownField = await call('POST', '/v1/orders', { token, body: { items: [{ productId: products[0].id, quantity: 1 }], amount: 5 } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.errors[0]).toMatchObject({ field: 'amount', code: 'UNKNOWN_FIELD' });
    const malformed = await call('POST', '/v1/orders', { token, body: '{"items": [' });
    expect(malformed.body.code).toBe('MALFORMED_JSON');
    const rules = failed(await anonymous.POST('/users', { body: { name: 'x', email: 'nope', password: 'short' } }));
    expect(rules.status).toBe(422);
    expect(rules.error.errors.map((e) => e.field)).toEqual(['email', 'password']);
    expect(failed(await api.GET('/orders', { params: { query: { sort: 'secret' } } })).status).toBe(400);
    expect(failed(await api.GET('/orders', { params: { query: { cursor: 'forged.cursor' } } })).error.code).toBe('INVALID_CURSOR');
    expect(failed(await api.GET('/orders', { params: { query: { size: 0 } } })).status).toBe(422);
    expect((await call('GET', '/v1/orders?bogus=1', { token })).body.errors[0].code).toBe('UNKNOWN_PARAMETER');
  });

  it('400 for a malformed %-escape in the query (VALIDATION_FAILED naming the parameter), as in the path (MALFORMED_REQUEST)', async () => {
    const { token } = await signUp();
    const base = new URL(gatewayUrl);
    // On a raw socket: the target goes out byte for byte, as no URL-building client would send it.
    // The socket stays open for the answer (a half-closed one is closed unanswered by the server
    // once its request needs a round trip), and `Connection: close` ends it after the answer.
    const get = (target: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const socket = connect(Number(base.port), base.hostname);
        const chunks: Buffer[] = [];
        socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to GET ${target}`)));
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => resolve(answersIn(Buffer.concat(chunks).toString('latin1'))[0]));
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
      });
    const query = await get('/v1/products?q=%E0%A4%A');
    expect([query.status, JSON.parse(query.body)]).toEqual([400, { code: 'VALIDATION_FAILED', message: expect.any(String), traceId: expect.any(String), errors: [{ field: 'q', code: 'INVALID_FORMAT', message: expect.any(String) }] }]);
    const path = await get('/v1/products/%E0%A4%A');
    expect([path.status, JSON.parse(path.body).code]).toEqual([400, 'MALFORMED_REQUEST']);
  });

  it('401, 404 (unknown path, unknown version), 405, 406, 413, 415, and problem+json on request', async () => {
    const { token } = await signUp();
    const unauthenticated = await anonymous.GET('/orders');
    expect(failed(unauthenticated).status).toBe(401);
    expect(unauthenticated.response.headers.get('www-authenticate')).toBe('Bearer');
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
    const attempts = [];
    for (let i = 0; i < 6; i++) {
      const attempt = await anonymous.POST('/tokens', { body: { email, password: 'wrong-password' } });
      expect(attempt.response.headers.get('ratelimit-policy')).toBe('"tokens";q=5;w=60');
      attempts.push(attempt);
    }
    // The sign-up's own token request spent one of the five.
    expect(attempts.map((attempt) => attempt.response.status)).toEqual([401, 401, 401, 401, 429, 429]);
    const last = attempts[5];
    expect(failed(last).error.code).toBe('RATE_LIMITED');
    expect(Number(last.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last.response.headers.get('ratelimit')).toMatch(/^"tokens";r=0;t=\d+$/);
  });

  // The gateway counts sign-ins per e-mail by the rule users-service finds accounts by
  // (emailKeyOf, @platform/auth): every form of the address that signs in to the account spends
  // the account's one budget, never a fresh one.
  it('counts every form of an address that signs in to one account against that account\'s one sign-in budget', async () => {
    const tag = `${Date.now()}-${seq++}`;
    const created = await anonymous.POST('/users', { body: { name: 'Kim Tricky', email: `Kim-${tag}@Example.COM`, password: 'e2e-password-1' } });
    expect(created.response.status).toBe(201);
    const forms = [`kim-${tag}@example.com`, `KIM-${tag}@EXAMPLE.COM`, ` \tKim-${tag}@Example.com\r\n`, `\u00a0kim-${tag}@example.com\ufeff`, `\u212aim-${tag}@example.com`];
    const seen = [];
    for (const email of forms) {
      const signIn = await anonymous.POST('/tokens', { body: { email, password: 'e2e-password-1' } });
      const me = signIn.data ? ok(await clientFor(signIn.data.accessToken).GET('/users/{id}', { params: { path: { id: 'me' } } })).id : undefined;
      seen.push([JSON.stringify(email), signIn.response.status, me === ok(created).id, signIn.response.headers.get('ratelimit')?.replace(/;t=\d+$/, '')]);
    }
    expect(seen).toEqual(forms.map((email, at) => [JSON.stringify(email), 200, true, `"tokens";r=${forms.length - 1 - at}`]));
    const spent = await anonymous.POST('/tokens', { body: { email: `kim-${tag}@example.com`, password: 'e2e-password-1' } });
    expect([spent.response.status, failed(spent).error.code]).toEqual([429, 'RATE_LIMITED']);
  });
});

describe('GraphQL through the gateway', () => {
  it('answers order(id) across three subgraphs with exactly the requested fields', async () => {
    const { api, user } = await signUp();
    const product = products[10];
    const placed = ok(await api.POST('/orders', { body: { items: [{ productId: product.id, quantity: 1 }] } }));
    const query = `query($id: ID!) { order(id: $id) { id amount user { name } product { name imageUrl rating } shipment { status } reviewCount } }`;
    const res = await api.POST('/graphql', { body: { query, variables: { id: placed.id } } });
    expect(res.response.status).toBe(200);
    const rating = ok(await api.GET('/products/{id}', { params: { path: { id: product.id } } }));
    expect(ok(res)).toEqual({
      data: { order: { id: placed.id, amount: product.price, user: { name: user.name }, product: { name: product.name, imageUrl: product.imageUrl, rating: rating.rating }, shipment: { status: 'PREPARING' }, reviewCount: rating.reviewCount } },
      extensions: { cost: { requested: 16, limit: 5_000 } },
    });
  });

  it('answers orders(first){id user{name}} and hides another customer\'s order as null + NOT_FOUND (HTTP 200)', async () => {
    const alice = await signUp();
    const bob = await signUp();
    const placed = ok(await alice.api.POST('/orders', { body: { items: [{ productId: products[11].id, quantity: 1 }] } }));
    const mine = await call('POST', '/graphql', { token: alice.token, body: { query: '{ orders(first: 5) { id user { name } } }' } });
    expect(mine.body).toEqual({ data: { orders: [{ id: placed.id, user: { name: alice.user.name } }] }, extensions: { cost: { requested: 2 + 5 * (1 + 2 + 1), limit: 5_000 } } });
    const hidden = ok(await bob.api.POST('/graphql', { body: { query: `{ order(id: "${placed.id}") { id } }` } }));
    expect(hidden.data?.order).toBeNull();
    expect(hidden.errors?.[0]).toMatchObject({ path: ['order'], extensions: { code: 'NOT_FOUND' } });
  });
});
